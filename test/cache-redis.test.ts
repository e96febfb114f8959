// The response cache on Redis (config.yaml cache.store: redis): two gateways on one Redis share entries (a hit made by
// one is served by the other), and Redis stopping mid-run turns hits into misses, never into errors.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

let fake: FakeUpstream;
let port: number;
let redis: ChildProcess | undefined;
let one: TestGateway;
let two: TestGateway;
let keyOfTwo: string;

/** A free port on 127.0.0.1, for a Redis of this file's own (stopped and started again by the tests). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: found } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return found;
}

async function startRedis(): Promise<void> {
  redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    redis!.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('Ready to accept connections') && resolve());
    redis!.once('exit', (code) => reject(new Error(`redis-server exited with ${code}`)));
  });
}

async function stopRedis(): Promise<void> {
  const process = redis;
  redis = undefined;
  if (!process || process.exitCode !== null) return;
  await new Promise((resolve) => {
    process.once('exit', resolve);
    process.kill('SIGTERM');
  });
}

const routes = `
- id: shared-chat
  cache: { ttlSeconds: 600 }
  targets: [{ model: alpha }]
`;

const options = () => ({
  channels: { a: `id: a\nprotocol: openai-chat\nbaseUrl: ${fake.url}/v1\nmodels:\n  - id: alpha\n    kind: chat\n    price: { inputPerMillion: 1, outputPerMillion: 2 }\n` },
  files: { 'routes/cache.yaml': routes },
  extraConfig: `cache:\n  store: redis\n  url: redis://127.0.0.1:${port}\n  timeoutMs: 1000\n  namespace: test-${port}\n`,
  listen: true,
});

beforeAll(async () => {
  fake = await FakeUpstream.start();
  port = await freePort();
  await startRedis();
  [one, two] = await Promise.all([startGateway(options()), startGateway(options())]);
  // Two replicas share one database: the second knows the first's workspace.
  await two.services.db.insertInto('workspaces').values({ ...one.workspace, name: 'shared' }).execute();
  keyOfTwo = await two.newKey({ workspace: one.workspace });
  // Each store connects on its first use: made here, so the tests time requests, not connections.
  await Promise.all([one.services.responseCache.store.read('warm-up'), two.services.responseCache.store.read('warm-up')]);
}, 60_000);
afterAll(async () => {
  await Promise.all([one?.close(), two?.close()]);
  await stopRedis();
  await fake?.close();
});

const client = (gw: TestGateway, key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
const ask = (gw: TestGateway, key: string, content: string) =>
  client(gw, key).chat.completions.create({ model: 'shared-chat', temperature: 0, messages: [{ role: 'user', content }] }).withResponse();

/** Asks until `outcome` (the other gateway's write lands a moment after its answer), at most 5 s. */
async function askUntil(gw: TestGateway, key: string, content: string, outcome: string): Promise<string | null> {
  let seen: string | null = null;
  for (let i = 0; i < 100 && seen !== outcome; i++) {
    seen = (await ask(gw, key, content)).response.headers.get('x-cache');
    if (seen !== outcome) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return seen;
}

describe('response cache on Redis', () => {
  it('serves from one gateway an answer the other fetched', async () => {
    fake.reset();
    const first = await ask(one, one.key, 'shared question');
    expect(first.response.headers.get('x-cache')).toBe('miss');
    expect(await askUntil(two, keyOfTwo, 'shared question', 'hit')).toBe('hit');
    expect(fake.requests).toHaveLength(1);
  });

  it('answers every request while Redis is stopped (misses, no errors), and hits again once it is back', async () => {
    await stopRedis();
    fake.reset();
    const started = Date.now();
    for (let i = 0; i < 4; i++) {
      const { data, response } = await ask(one, one.key, 'asked while redis is down');
      expect(response.status).toBe(200);
      expect(response.headers.get('x-cache')).toBe('miss');
      expect(data.choices[0].message.content).toBeTruthy();
    }
    expect(fake.requests).toHaveLength(4);
    expect(Date.now() - started).toBeLessThan(8000);
    await startRedis();
    await askUntil(one, one.key, 'asked once redis is back', 'miss');
    expect(await askUntil(two, keyOfTwo, 'asked once redis is back', 'hit')).toBe('hit');
  }, 30_000);
});
