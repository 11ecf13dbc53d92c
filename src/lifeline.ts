/**
 * The launcher's lifeline. bin/herald.js runs Herald in a process group of its own, so that Herald hears each signal
 * once, from the launcher; a SIGKILL of the launcher's group, or of the launcher alone (the OOM killer, a supervisor
 * that knows one PID), would leave Herald running on its own, holding its port and its data. So the launcher gives
 * Herald an IPC channel, and Herald exits at once when it closes: nobody is left to forward a signal or read the exit
 * status. An abrupt exit is safe (a 202 follows its commit; an attempt cut short is leased and made again).
 */
export function holdLifeline(): void {
  const channel = process.channel;
  if (!channel) return; // not started by the launcher (`node src/cli.ts …`, tests)
  process.on('disconnect', () => {
    console.error('herald: the launcher is gone; exiting at once');
    process.exit(1);
  });
  // The channel must not keep a command that has finished (`herald --help`) running; listening re-refs it.
  channel.unref();
}
