// scripts/build.mjs (npm run build, and --if-stale before npm start and from the admin CLI) on a small project of its
// own: a full tsc build the first time, nothing when nothing changed, then only the changed files, and nothing left
// behind; and the bundled admin CLI bringing a stale build up to date itself before it answers.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from './kit/paths.js';

const root = mkdtempSync(join(tmpdir(), 'build-script-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function build(...args: string[]): string {
  const run = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs'), ...args], { cwd: root, encoding: 'utf8' });
  expect(run.status, `${run.stdout}${run.stderr}`).toBe(0);
  return run.stdout.trim();
}

/** Moves the last build's time a minute back (the project's files before it), so the writes that follow are newer than it (as an edit after a build is). */
function buildLongAgo(): void {
  const earlier = new Date(Date.now() - 60_000);
  const configured = new Date(Date.now() - 120_000);
  utimesSync(join(root, 'dist', '.build-stamp'), earlier, earlier);
  const sources = readdirSync(join(root, 'src'), { recursive: true }).map((file) => join('src', String(file)));
  for (const file of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'src', ...sources]) utimesSync(join(root, file), configured, configured);
}

describe('the build script', () => {
  it('builds fully once, then does nothing, then transpiles only what changed and removes what a deleted source left', () => {
    mkdirSync(join(root, 'scripts'));
    cpSync(join(repoRoot, 'scripts', 'build.mjs'), join(root, 'scripts', 'build.mjs'));
    symlinkSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
    writeFileSync(join(root, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, types: ['node'] } }));
    writeFileSync(join(root, 'tsconfig.build.json'), JSON.stringify({ extends: './tsconfig.json', compilerOptions: { outDir: 'dist', rootDir: 'src', sourceMap: true }, include: ['src'] }));
    mkdirSync(join(root, 'src', 'views'), { recursive: true });
    // The script bundles the admin CLI (src/cli/admin.ts) into dist/cli/admin.js after each build that compiled something.
    mkdirSync(join(root, 'src', 'cli'), { recursive: true });
    mkdirSync(join(root, 'src', 'cli', 'admin'), { recursive: true });
    cpSync(join(repoRoot, 'src', 'cli', 'admin', 'stale-build.ts'), join(root, 'src', 'cli', 'admin', 'stale-build.ts'));
    writeFileSync(join(root, 'src', 'cli', 'admin.ts'), "import { greeting } from '../greet.js';\nimport { rerunIfStale } from './admin/stale-build.js';\nrerunIfStale(import.meta.url);\nconsole.log(greeting('admin'));\n");
    writeFileSync(join(root, 'src', 'main.ts'), "import { greeting } from './greet.js';\nimport type { Name } from './types.js';\nconst who: Name = 'world';\nconsole.log(greeting(who));\n");
    writeFileSync(join(root, 'src', 'greet.ts'), "export const greeting = (name: string): string => `hello ${name}`;\n");
    writeFileSync(join(root, 'src', 'types.ts'), 'export type Name = string;\n');
    writeFileSync(join(root, 'src', 'old.ts'), 'export const old = 1;\n');
    writeFileSync(join(root, 'src', 'views', 'page.eta'), 'one\n');
    const node = (file: string) => spawnSync(process.execPath, [join(root, 'dist', file)], { encoding: 'utf8' }).stdout;

    expect(build('--if-stale')).toMatch(/^build: src\/ -> dist\/$/m);
    expect(node('main.js')).toBe('hello world\n');
    expect(node('cli/admin.js')).toBe('hello admin\n');
    expect(build('--if-stale')).toBe('');

    buildLongAgo();
    writeFileSync(join(root, 'src', 'greet.ts'), "export const greeting = (name: string): string => `hi ${name}`;\n");
    writeFileSync(join(root, 'src', 'views', 'page.eta'), 'two\n');
    rmSync(join(root, 'src', 'old.ts'));
    expect(build('--if-stale')).toBe('build: 1 changed file(s) of src/ transpiled, 1 copied, 2 removed from dist/');
    expect(node('main.js')).toBe('hi world\n');
    expect(node('cli/admin.js')).toBe('hi admin\n');
    expect(readFileSync(join(root, 'dist', 'views', 'page.eta'), 'utf8')).toBe('two\n');
    expect(existsSync(join(root, 'dist', 'old.js'))).toBe(false);
    expect(existsSync(join(root, 'dist', 'old.js.map'))).toBe(false);
    expect(build('--if-stale')).toBe('');

    // The CLI run on a build older than src/: it has the build brought up to date, then answers from the new one.
    buildLongAgo();
    writeFileSync(join(root, 'src', 'greet.ts'), "export const greeting = (name: string): string => `hey ${name}`;\n");
    expect(node('cli/admin.js')).toBe('build: 1 changed file(s) of src/ transpiled, 0 copied, 0 removed from dist/\nhey admin\n');
    expect(node('cli/admin.js')).toBe('hey admin\n');
  }, 120_000);
});
