import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './kit/gateway.js';

// What a gateway that only relays never runs is not loaded by the app's imports (issue 52: RSS idle under 100 MiB a
// worker): undici's index (src/net/undici.ts requires its parts), Node's own bundled undici (which the index's web
// classes pull in through the globals File and Headers), and the dashboard and the admin API (src/http/mount-on-use.ts builds
// each on the first request under its prefix; dashboard-*.test.ts and admin-*.test.ts go through it).
describe("the app's imports", () => {
  it("leave undici's index, Node's bundled undici, the dashboard's plugins and the session's libsodium unloaded", () => {
    const script = `await import('./src/app.ts');
const cjs = Object.keys((await import('node:module')).default._cache);
const has = (part) => cjs.some((f) => f.includes(part));
console.log(JSON.stringify({ undiciIndex: has('/undici/index.js'), bundledUndici: process.moduleLoadList.some((m) => m.includes('deps/undici')), helmet: has('/@fastify/helmet/'), session: has('/@fastify/secure-session/'), sodium: has('/sodium-native/'), undiciPool: has('/undici/lib/dispatcher/pool.js'), fastify: has('/fastify/fastify.js') }));`;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot, encoding: 'utf8' });
    expect(JSON.parse(out.trim().split('\n').pop()!)).toEqual({ undiciIndex: false, bundledUndici: false, helmet: false, session: false, sodium: false, undiciPool: true, fastify: true });
  }, 60_000);
});

// `npm start` and the image let the young generation grow to 32 MiB a semi-space under load (V8's default is 16): half
// the scavenges, each copying about what one copies at 16 (the requests in flight): 4.2 -> 2.3 µs of them a request at
// c=32 (bench/README.md, eleventh session). Checked in the process the start script makes: its young
// generation grows past the default's largest under a steady survival rate; and the image sets the same.
describe('the start script', () => {
  const start = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
  const flag = /--max-semi-space-size=(\d+)/.exec(start)?.[0];

  it('gives node a young generation of up to 32 MiB a semi-space, as the image does, and keeps an operator\'s NODE_OPTIONS after it', () => {
    expect(flag).toBe('--max-semi-space-size=32');
    expect(readFileSync(join(repoRoot, 'Dockerfile'), 'utf8')).toMatch(/NODE_OPTIONS=--max-semi-space-size=32 /);
    // The script as npm runs it, with the gateway replaced by a loop that keeps a fifth of what it allocates for a while.
    const grow = `let kept = []; for (let i = 0; i < 4e6; i++) { kept.push({ i }); if (kept.length > 2e5) kept = []; }
console.log(JSON.stringify({ young: require("node:v8").getHeapSpaceStatistics().find((s) => s.space_name === "new_space").space_size, options: process.env.NODE_OPTIONS }));`;
    const command = start.replace('exec node dist/main.js', `exec node -e '${grow}'`);
    const run = (env: NodeJS.ProcessEnv) => JSON.parse(execFileSync('sh', ['-c', command], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, ...env } }).trim()) as { young: number; options: string };
    const ours = run({ NODE_OPTIONS: '' });
    expect(ours.young).toBeGreaterThan(16 * 2 ** 20);
    // An operator's own NODE_OPTIONS comes after the script's: a later --max-semi-space-size wins.
    const theirs = run({ NODE_OPTIONS: '--max-semi-space-size=8' });
    expect(theirs.options).toBe('--max-semi-space-size=32 --max-semi-space-size=8');
    expect(theirs.young).toBeLessThanOrEqual(16 * 2 ** 20);
  }, 60_000);
});
