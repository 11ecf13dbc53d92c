/**
 * DATA_DIR holds message bodies, phone numbers, key hashes, the key that seals signing secrets and stored media:
 * they are for Herald's own user alone. What Herald creates there is made 0700 (folders) and 0600 (files) as it is
 * created; `tightenDataDir` brings a DATA_DIR from before (or copied in with looser modes) to the same at start.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** The folder and any missing parents, created 0700 (an existing one is left as it is). */
export function makePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Creates `file` empty with mode 0600 when it does not exist yet. For files another library opens (SQLite): it
 * gives a new file its creator's umask mode, 0644 as a rule, and gives its companion files (-wal, -shm,
 * -journal) the mode of the main file, so a main file made 0600 first keeps them all private.
 */
export function createPrivateFile(file: string): void {
  closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
}

/** What tightenDataDir did, for the start's log. */
export interface Tightened {
  /** Paths whose group and other permissions were removed. */
  changed: string[];
  /** Paths that stay readable by others, with why (not owned by Herald's user, as a rule). */
  failed: { path: string; reason: string }[];
}

/**
 * Removes group and other permissions from DATA_DIR and everything in it: one stat per file at start, for a
 * folder a copy (`cp -r`, a restore) may have left at the copier's umask. Something Herald's user does not own (a
 * volume's root mounted for it) cannot be changed: that is reported, not fatal.
 */
export function tightenDataDir(dataDir: string): Tightened {
  const result: Tightened = { changed: [], failed: [] };
  const tighten = (path: string) => {
    try {
      const mode = statSync(path).mode & 0o777;
      if ((mode & 0o077) === 0) return;
      // The owner's own bits stay as they were.
      chmodSync(path, mode & 0o700);
      result.changed.push(path);
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code !== 'ENOENT') result.failed.push({ path, reason: code ?? (err as Error).message });
    }
  };
  if (!existsSync(dataDir)) return result;
  tighten(dataDir);
  for (const e of readdirSync(dataDir, { withFileTypes: true, recursive: true })) {
    // Symbolic links are not followed: what they point at is not Herald's to change.
    if (e.isDirectory() || e.isFile()) tighten(join(e.parentPath, e.name));
  }
  return result;
}

/** tightenDataDir at start, saying in the log what it changed and what it could not. */
export function secureDataDir(dataDir: string, logger: Logger): void {
  const { changed, failed } = tightenDataDir(dataDir);
  if (changed.length) {
    logger.warn(
      { paths: changed },
      `DATA_DIR: group and other permissions removed from ${changed.length} path(s); Herald's data is for its own user alone`,
    );
  }
  for (const { path, reason } of failed) {
    logger.warn(
      { path, reason },
      `DATA_DIR: ${path} stays readable by group or others (${reason}); make it 0700 (folders) or 0600 (files), or let Herald's user own it`,
    );
  }
}
