/**
 * The last step of `npm test`: no Herald process that a test started is still running. Every start in
 * test/support/spawn.ts marks its processes' environment; a process that outlived its test (a server that outlived
 * its launcher, say) would hold a port and a data directory on the machine, and fails the suite here.
 */
import { commandLine, processesWith, START_MARKER } from './support/spawn.ts';

const left = processesWith(START_MARKER);
if (left.length) {
  console.error(
    `Herald processes left running by the tests:\n${left.map((p) => `  ${p} ${commandLine(p)}`).join('\n')}`,
  );
  process.exit(1);
}
console.log('No Herald process left running by the tests.');
