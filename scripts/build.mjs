// npm run build (and npm's `prepare`, which runs it on `npm install` / `npm ci`): compiles src/ with tsc into dist/ and
// copies what is not TypeScript beside it (the dashboard's views and public files; the endpoint catalogue is read from catalogue/ at the top), so
// `npm start` runs plain JavaScript. `--if-stale` (npm's `prestart`) builds only when something under src/, a tsconfig
// or package.json is newer than the last build. Plain JavaScript itself: it runs before anything is compiled.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
const src = join(root, 'src');
const dist = join(root, 'dist');
const stamp = join(dist, '.build-stamp');

/** The newest modification time under `dir`, directories included (a deleted file changes its directory's). */
function newest(dir) {
  let latest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

function stale() {
  if (!existsSync(stamp)) return true;
  const built = statSync(stamp).mtimeMs;
  const inputs = [newest(src), ...['tsconfig.json', 'tsconfig.build.json', 'package.json'].map((f) => statSync(join(root, f)).mtimeMs)];
  return inputs.some((t) => t > built);
}

if (process.argv.includes('--if-stale') && !stale()) process.exit(0);

// A clean output: a file deleted from src/ (a migration, a filter) must not linger in dist/ and still be loaded.
rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (compiled.status !== 0) {
  console.error('build: tsc failed; dist/ was not written');
  rmSync(dist, { recursive: true, force: true });
  process.exit(compiled.status ?? 1);
}
cpSync(src, dist, {
  recursive: true,
  filter: (from) => statSync(from).isDirectory() || !from.endsWith('.ts'),
});
writeFileSync(stamp, `${new Date().toISOString()}\n`);
console.log(`build: ${relative(root, src)}/ -> ${relative(root, dist)}/`);
