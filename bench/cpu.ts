/**
 * CPU seconds of processes, read from /proc/<pid>/stat: every process the bench measures (Herald, the publisher,
 * the receiver, redis-server, the BullMQ worker, PostgreSQL's server processes) is read the same way, from outside,
 * so that no figure depends on a process's own accounting.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of the stat fields (USER_HZ, nearly always 100). */
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })) || 100;

interface Stat {
  ppid: number;
  /** utime + stime: the process's own CPU. */
  own: number;
  /** cutime + cstime: its children that have exited and been waited for. */
  reaped: number;
}

function stat(pid: number): Stat | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null; // gone
  }
  // The command name (field 2) is in parentheses and may hold spaces: count fields from after its ')'.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // f[0] is field 3 (state): ppid is field 4, utime/stime/cutime/cstime fields 14-17.
  return { ppid: Number(f[1]), own: Number(f[11]) + Number(f[12]), reaped: Number(f[13]) + Number(f[14]) };
}

/**
 * CPU seconds of `pid` and all its descendants so far. Children that exited and were reaped count through their
 * parent's cutime/cstime, so the figure only grows, and the difference of two readings is the tree's CPU between
 * them (PostgreSQL's backends come and go; redis-server forks to rewrite its AOF).
 */
export function treeCpuSeconds(pid: number): number {
  const children = new Map<number, number[]>();
  const stats = new Map<number, Stat>();
  for (const name of readdirSync('/proc')) {
    const p = Number(name);
    if (!Number.isInteger(p)) continue;
    const s = stat(p);
    if (!s) continue;
    stats.set(p, s);
    children.set(s.ppid, [...(children.get(s.ppid) ?? []), p]);
  }
  let ticks = 0;
  const visit = (p: number) => {
    const s = stats.get(p);
    if (!s) return;
    ticks += s.own + s.reaped;
    for (const c of children.get(p) ?? []) visit(c);
  };
  visit(pid);
  return ticks / TICKS;
}

/** Starts a meter over named processes; the function it returns gives each one's CPU seconds since. */
export function cpuMeter(pids: Record<string, number>): () => Record<string, number> {
  const read = () =>
    Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, treeCpuSeconds(pid)]));
  const before = read();
  return () => Object.fromEntries(Object.entries(read()).map(([name, s]) => [name, s - before[name]]));
}
