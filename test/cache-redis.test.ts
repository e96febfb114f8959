// The response cache on Redis (config.yaml cache.store: redis): two gateways on one Redis share entries (a hit made by
// one is served by the other), a near question asked of one is answered semantically by the other (the vectors shared
// on Redis), and Redis stopping mid-run turns hits into misses, never into errors.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '@keyv/redis';
import { FakeUpstream, json } from './kit/fake-upstream.js';
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
- id: shared-faq
  cache: { ttlSeconds: 600, semantic: { model: emb, threshold: 0.9 } }
  targets: [{ model: alpha }]
`;

/** A bag of words hashed into 64 dimensions: texts with the same words (any order, any case) embed alike. */
function bagOfWords(text: string): number[] {
  const vector = new Array<number>(64).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 0;
    for (const c of word) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    vector[h % 64] += 1;
  }
  return vector;
}

const options = () => ({
  channels: { a: `id: a\nprotocol: openai-chat\nbaseUrl: ${fake.url}/v1\nmodels:\n  - id: alpha\n    kind: chat\n    price: { inputPerMillion: 1, outputPerMillion: 2 }\n  - id: emb\n    upstream: text-embedding-3-small\n    kind: embedding\n    price: { inputPerMillion: 1 }\n` },
  files: { 'routes/cache.yaml': routes },
  extraConfig: `cache:\n  store: redis\n  url: redis://127.0.0.1:${port}\n  timeoutMs: 1000\n  namespace: test-${port}\n`,
  listen: true,
});

beforeAll(async () => {
  fake = await FakeUpstream.start();
  fake.route((req, res) => {
    if (req.method !== 'POST' || req.path !== '/v1/embeddings') return false;
    json(res, 200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: bagOfWords(String(req.body.input)) }], model: req.body.model, usage: { prompt_tokens: 8, total_tokens: 8 } });
    return true;
  });
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

  it('answers a near question asked of one gateway from the answer the other fetched: the vectors are shared on Redis', async () => {
    fake.reset();
    const faq = (gw: TestGateway, key: string, content: string) => client(gw, key).chat.completions.create({ model: 'shared-faq', temperature: 0, messages: [{ role: 'user', content }] }).withResponse();
    expect((await faq(one, one.key, 'What is the capital of France?')).response.headers.get('x-cache')).toBe('miss');
    // The vector is pushed once the answer is stored, a moment after it went out: waited for on Redis itself.
    const redisClient = createClient({ url: `redis://127.0.0.1:${port}` });
    await redisClient.connect();
    try {
      for (let i = 0; i < 100; i++) {
        const streams = await redisClient.keys(`test-${port}:semantic:*`);
        if (streams.length && (await redisClient.xLen(streams[0]!)) > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await redisClient.quit();
    }
    // Other words in another order: another exact key, the same bag of words. The second gateway never saw the first question.
    const near = await faq(two, keyOfTwo, 'france: the capital of it is what');
    expect(near.response.headers.get('x-cache')).toBe('hit');
    expect(near.response.headers.get('x-cache-match')).toBe('semantic');
    expect(fake.requests.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(1);
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
