import { execFileSync } from 'node:child_process';
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
