/**
 * The first code `node src/cli.ts` runs (src/cli.ts is a link to this file): plain JavaScript, so that a Node too old
 * to load TypeScript still gets this far and says what is wrong instead of "Unknown file extension .ts".
 */
const NEEDED = 24;
const major = Number(process.versions.node.split('.')[0]);
if (major < NEEDED) {
  console.error(
    `herald: Node.js ${NEEDED} or later is needed; this is Node.js ${process.version} (${process.execPath}).\n` +
      'The project installs Node.js 24 with its dependencies: run "npm install", then "npx herald …" or "npm start".',
  );
  process.exit(1);
}
await import('./main.ts');
