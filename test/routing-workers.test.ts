// Cooldowns shared by two worker processes through Redis (issue 44, "Two workers ... share cooldowns"): the compiled
// gateway (dist/main.js) with server.workers: 2 and storage.cache on Redis (REDIS_URL). A target that failed in one
// worker is skipped by the other, whose first routed request reaches the failing upstream not once.
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { issueApiKey } from '../src/auth/keys.js';
import { openSqlite } from '../src/store/database.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { repoRoot } from './kit/paths.js';
import { killTree, spawnWorkers, type GatewayProcess } from './kit/process.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Channel ids of this run: the shared cooldown keys are named by them, so runs never see each other's. */
const run = randomUUID().slice(0, 8);
const dir = mkdtempSync(join(tmpdir(), 'gateway-route-workers-'));
let gateway: GatewayProcess | undefined;
let url: string;
let key: string;
let fa: FakeUpstream;
let fb: FakeUpstream;

const channel = (id: string, baseUrl: string, model: string) =>
  `id: ${id}\nprotocol: openai-chat\nbaseUrl: ${baseUrl}/v1\nmodels:\n  - id: ${model}\n    kind: chat\n    price: { inputPerMillion: 1, outputPerMillion: 2 }\n`;

beforeAll(async () => {
  [fa, fb] = await Promise.all([FakeUpstream.start(), FakeUpstream.start()]);
  mkdirSync(join(dir, 'channels'));
  mkdirSync(join(dir, 'routes'));
  writeFileSync(join(dir, 'channels', 'a.yaml'), channel(`a-${run}`, fa.url, 'alpha'));
  writeFileSync(join(dir, 'channels', 'b.yaml'), channel(`b-${run}`, fb.url, 'beta'));
  writeFileSync(join(dir, 'routes', 'shared.yaml'), `id: shared\ncooldown: { failures: 1, windowSeconds: 30, seconds: 600 }\ntargets: [{ model: alpha }, { model: beta }]\n`);
  ({ gateway, url } = await spawnWorkers(
    dir,
    `server:\n  workers: 2\nstorage:\n  dataDir: ${dir}/data\n  cache:\n    driver: redis\n    url: ${redisUrl}\nchannels:\n  dir: ./channels\n  protocolsDir: ${repoRoot}/channels/protocols\n`,
  ));
  const database = await openSqlite(join(dir, 'data', 'gateway.db'));
  const workspace = await database.db.selectFrom('workspaces').select(['id', 'name']).where('name', '=', 'default').executeTakeFirstOrThrow();
  key = (await issueApiKey(database.db, workspace as never)).key;
  await database.close();
  // Two compiled workers start here, on a machine other suites share.
}, 120_000);
afterAll(async () => {
  killTree(gateway);
  await Promise.all([fa, fb].map((f) => f?.close()));
  rmSync(dir, { recursive: true, force: true });
});

/** One request on a connection of its own (the primary hands each connection to a worker in turn): its target, and the pid of the worker that served it. */
async function chat(n: number): Promise<{ target: string | null; pid: number }> {
  const requestId = `route-workers-${run}-${n}`;
  const res = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', connection: 'close', 'x-request-id': requestId },
    body: JSON.stringify({ model: 'shared', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  expect(res.status).toBe(200);
  // The worker's line for the request (JSON, with its pid) names the request id the client sent.
  const line = await vi.waitFor(() => {
    const found = gateway!.lines.find((l) => l.includes(`"reqId":"${requestId}"`) && l.includes('POST /v1/chat/completions'));
    expect(found).toBeDefined();
    return found!;
  });
  return { target: res.headers.get('x-gateway-target'), pid: (JSON.parse(line) as { pid: number }).pid };
}

describe('two workers on one Redis', () => {
  it('a target one worker cooled is skipped by the other: the failing upstream is asked once', async () => {
    fa.next({ kind: 'status', status: 503 });
    const first = await chat(0);
    expect(first.target).toBe(`b-${run}/beta`);
    expect(fa.requests).toHaveLength(1);
    // Requests until the other worker has served some: each goes to beta, alpha is never asked again.
    const served: { target: string | null; pid: number }[] = [];
    for (let n = 1; n <= 20 && served.filter((s) => s.pid !== first.pid).length < 2; n++) served.push(await chat(n));
    const other = served.filter((s) => s.pid !== first.pid);
    expect(other.length).toBe(2);
    expect(new Set(served.map((s) => s.target))).toEqual(new Set([`b-${run}/beta`]));
    expect(fa.requests).toHaveLength(1);
  });
});
