// The compiled gateway (dist/) for suites that start it in a child process: `node dist/main.js` starts in a fraction of
// the time `tsx src/main.ts` takes (tsx compiles every module again in each child, and in each worker of a primary).
// The global setup of the projects that start children (setup, below) builds what src/ changed since the last build first.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './paths.js';

/** The compiled file of an entry point of src/: `compiled('main')` is dist/main.js, `compiled('cli/admin')` dist/cli/admin.js. */
export const compiled = (entry: string): string => join(repoRoot, 'dist', `${entry}.js`);

/** The shipped protocol files, tests/ included: test gateways link this folder, so a test must never write into it. */
const shippedProtocols = () => readdirSync(join(repoRoot, 'channels', 'protocols'), { recursive: true }).map(String).sort().join('\n');

/**
 * vitest's globalSetup: what `npm start` and `npm run admin` do first (`scripts/build.mjs --if-stale`), once per run;
 * its teardown fails the run if a test left a file in the repository's channels/protocols/ (through a gateway's link).
 */
export default function setup(): () => void {
  const build = spawnSync(process.execPath, [join(repoRoot, 'scripts', 'build.mjs'), '--if-stale'], { cwd: repoRoot, encoding: 'utf8' });
  if (build.status !== 0) throw new Error(`scripts/build.mjs --if-stale failed (${build.status}):\n${build.stdout}${build.stderr}`);
  const before = shippedProtocols();
  return () => {
    if (shippedProtocols() !== before) throw new Error('a test wrote into the repository\'s channels/protocols/ (through a test gateway\'s link to it): see git status');
  };
}
