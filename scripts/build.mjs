// npm run build (and npm's `prepare`, which runs it on `npm install` / `npm ci`): compiles src/ with tsc into dist/ and
// copies what is not TypeScript beside it (the dashboard's views and public files; the endpoint catalogue is read from catalogue/ at the top), so
// `npm start` runs plain JavaScript. `--if-stale` (npm's `prestart`, and the admin CLI itself: src/cli/admin/stale-build.ts) does nothing when nothing under
// src/ is newer than the last build, transpiles just the newer files when some are (esbuild, a second or less), and
// builds everything when there is no build yet or a tsconfig or package.json changed. Plain JavaScript itself: it runs
// before anything is compiled.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
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

/** Every file under `dir`, relative to it. */
function filesUnder(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath ?? entry.path, entry.name)));
}

/** What the last build is missing: nothing, a full build (no build yet, or a tsconfig or package.json changed), or some files of src/. */
function staleness() {
  if (!existsSync(stamp)) return { full: true };
  const built = statSync(stamp).mtimeMs;
  if (['tsconfig.json', 'tsconfig.build.json', 'package.json'].some((f) => statSync(join(root, f)).mtimeMs > built)) return { full: true };
  if (newest(src) <= built) return { full: false };
  // Newer than the build, or without an output (a file moved in keeps its older time).
  const output = (file) => join(dist, file.endsWith('.ts') ? file.replace(/\.ts$/, '.js') : file);
  return { full: false, changed: filesUnder(src).filter((file) => statSync(join(src, file)).mtimeMs > built || (file !== 'cli/demo.ts' && !existsSync(output(file)))) };
}

/** The source a file of dist/ was made from: its .ts for compiled JavaScript and its map, else the same path. */
function sourceOf(file) {
  if (existsSync(join(src, file))) return file;
  return file.replace(/\.js(\.map)?$/, '.ts');
}

/**
 * `npm start` after a change: transpile only the changed files with esbuild (as tsx does: types are not checked here;
 * `npm run build` and `npm run typecheck` check them), copy changed assets, and remove what a deleted source left in dist/.
 */
async function rebuildChanged(changed, startedAt) {
  const typescript = changed.filter((file) => file.endsWith('.ts') && file !== 'cli/demo.ts');
  if (typescript.length) {
    const { build } = await import('esbuild');
    await build({
      entryPoints: typescript.map((file) => join(src, file)),
      outdir: dist,
      outbase: src,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      sourcemap: true,
      tsconfig: join(root, 'tsconfig.build.json'),
      logLevel: 'error',
    });
  }
  for (const file of changed.filter((f) => !f.endsWith('.ts'))) cpSync(join(src, file), join(dist, file));
  let removed = 0;
  for (const file of filesUnder(dist)) {
    if (file === '.build-stamp' || file.startsWith(join('cli', 'admin-chunks')) || existsSync(join(src, sourceOf(file)))) continue;
    rmSync(join(dist, file));
    removed++;
  }
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  // The stamp takes the time the scan began: a file saved while this ran is newer, and is transpiled next time.
  utimesSync(stamp, new Date(startedAt), new Date(startedAt));
  console.log(`build: ${typescript.length} changed file(s) of src/ transpiled, ${changed.length - typescript.length} copied, ${removed} removed from dist/`);
}

/**
 * The admin CLI as one file, dist/cli/admin.js, over tsc's (or esbuild's) one: its code and its packages bundled,
 * so a command no longer resolves and reads some 400 modules (kysely alone is 260) before it answers: 1 s -> 0.3 s.
 * Only the native SQLite driver and optional packages stay outside. What it imports by a computed path (the whole
 * config loader for `reload`, the migrations a new database runs) is read from dist/ beside it.
 */
async function bundleAdminCli() {
  const { build } = await import('esbuild');
  rmSync(join(dist, 'cli', 'admin-chunks'), { recursive: true, force: true });
  await build({
    entryPoints: [join(src, 'cli', 'admin.ts')],
    outdir: join(dist, 'cli'),
    entryNames: '[name]',
    // What a command imports only on its path (the PostgreSQL driver) is a chunk of its own, read only when needed;
    // minified, the bundle V8 parses on every call is less than half the size: 0.25 s -> 0.12 s a command.
    splitting: true,
    chunkNames: 'admin-chunks/[name]-[hash]',
    minify: true,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    keepNames: true,
    tsconfig: join(root, 'tsconfig.build.json'),
    // jsonc-parser's main build is UMD, whose requires esbuild cannot follow: loaded from node_modules.
    external: ['better-sqlite3', 'jsonc-parser', 'pg-native', 'pg-cloudflare', 'cloudflare:sockets'],
    // The CommonJS packages inside an ES module bundle still call require().
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
    logLevel: 'error',
  });
}

if (process.argv.includes('--if-stale')) {
  const startedAt = Date.now();
  const state = staleness();
  if (!state.full && !state.changed) process.exit(0);
  if (!state.full) {
    await rebuildChanged(state.changed, startedAt);
    if (state.changed.some((file) => file.endsWith('.ts'))) await bundleAdminCli();
    process.exit(0);
  }
}

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
await bundleAdminCli();
writeFileSync(stamp, `${new Date().toISOString()}\n`);
console.log(`build: ${relative(root, src)}/ -> ${relative(root, dist)}/`);
