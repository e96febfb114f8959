// The response cache's bounds under pressure, through HTTP with the official SDK: one workspace flooding the memory
// store evicts its own oldest answers, never another workspace's (cache.maxWorkspaceBytes); a full store keeps a
// request's answer only on its second miss (cache.admission: second-miss, the default), so a flood of requests asked
// once evicts nothing; a Redis that stops answering costs one request one timeout, then is skipped (a circuit) until a
// probe after the back-off finds it answering again.
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

const REDIS = new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');

/** A TCP relay in front of Redis that can stall: what the client sends meanwhile is held (and counted), then sent on in order. */
class StallingRelay {
  private server!: Server;
  private readonly links: { client: Socket; redis: Socket }[] = [];
  private held: { redis: Socket; chunk: Buffer }[] = [];
  stalled = false;
  /** Bytes the gateway sent while the relay was stalled. */
  heldBytes = 0;
  port = 0;

  async start(): Promise<void> {
    this.server = createServer((client) => {
      const redis = createConnection({ host: REDIS.hostname, port: Number(REDIS.port || 6379) });
      this.links.push({ client, redis });
      client.on('data', (chunk: Buffer) => {
        if (!this.stalled) return void redis.write(chunk);
        this.heldBytes += chunk.length;
        this.held.push({ redis, chunk });
      });
      redis.on('data', (chunk: Buffer) => client.write(chunk));
      const end = () => (client.destroy(), redis.destroy());
      client.on('error', end).on('close', end);
      redis.on('error', end).on('close', end);
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  resume(): void {
    this.stalled = false;
    for (const { redis, chunk } of this.held) redis.write(chunk);
    this.held = [];
  }

  async close(): Promise<void> {
    for (const { client, redis } of this.links) client.destroy(), redis.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** A bag of words hashed into 32 dimensions: every text embeds (the semantic lookup runs), texts with other words differ. */
function bagOfWords(text: string): number[] {
  const vector = new Array<number>(32).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 7;
    for (const c of word) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    vector[h % 32] += 1;
  }
  return vector;
}

const channel = (url: string) =>
  `id: a\nprotocol: openai-chat\nbaseUrl: ${url}/v1\nmodels:\n  - id: alpha\n    kind: chat\n    price: { inputPerMillion: 1, outputPerMillion: 2 }\n  - id: emb\n    upstream: text-embedding-3-small\n    kind: embedding\n    price: { inputPerMillion: 1 }\n`;
const routes = `
- id: cached-chat
  cache: { ttlSeconds: 600 }
  targets: [{ model: alpha }]
- id: faq
  cache: { ttlSeconds: 600, semantic: { model: emb, threshold: 0.99 } }
  targets: [{ model: alpha }]
`;

let fake: FakeUpstream;
beforeAll(async () => {
  fake = await FakeUpstream.start();
  fake.route((req, res) => {
    if (req.method !== 'POST' || req.path !== '/v1/embeddings') return false;
    json(res, 200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: bagOfWords(String(req.body.input)) }], model: req.body.model, usage: { prompt_tokens: 8, total_tokens: 8 } });
    return true;
  });
});
afterAll(async () => {
  await fake?.close();
});

const client = (gw: TestGateway, key: string) => new OpenAI({ apiKey: key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
const ask = async (gw: TestGateway, key: string, model: string, content: string) => {
  const { data, response } = await client(gw, key).chat.completions.create({ model, temperature: 0, messages: [{ role: 'user', content }] }).withResponse();
  return { status: response.status, cache: response.headers.get('x-cache'), text: data.choices[0].message.content };
};
const chatCalls = () => fake.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

describe('the memory store bounds each workspace', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // About 40 answers fit in all; one workspace holds at most about 20 of them. Every miss is stored (least recently used out).
    gw = await startGateway({ channels: { a: channel(fake.url) }, files: { 'routes/cache.yaml': routes }, extraConfig: 'cache:\n  maxBytes: 40000\n  maxWorkspaceBytes: 20000\n  admission: always\n', listen: true });
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
  });

  it("keeps a quiet workspace's answers while another floods the store with twice what it holds", async () => {
    const quiet = ['what is a quiet answer one', 'what is a quiet answer two', 'what is a quiet answer three'];
    for (const q of quiet) expect((await ask(gw, gw.key, 'cached-chat', q)).cache).toBe('miss');
    const loudWorkspace = await gw.newWorkspace('loud');
    const loud = await gw.newKey({ workspace: loudWorkspace });
    for (let i = 0; i < 80; i++) expect((await ask(gw, loud, 'cached-chat', `loud question number ${i}`)).cache).toBe('miss');
    const memory = gw.services.responseCache.store.memory!;
    // The flood was more than the whole store holds: without a share per workspace it would have evicted everything.
    expect(memory.evictions).toBeGreaterThan(40);
    expect(memory.ownerBytes(loudWorkspace.id)).toBeLessThanOrEqual(20000);
    fake.reset();
    for (const q of quiet) expect((await ask(gw, gw.key, 'cached-chat', q)).cache).toBe('hit');
    expect(chatCalls()).toBe(0);
    // The flood evicted its own oldest answers.
    expect((await ask(gw, loud, 'cached-chat', 'loud question number 0')).cache).toBe('miss');
    expect((await ask(gw, loud, 'cached-chat', 'loud question number 79')).cache).toBe('hit');
  });
});

describe('a full memory store keeps answers asked again (cache.admission: second-miss, the default)', () => {
  let gw: TestGateway;
  beforeAll(async () => {
    // About 40 answers fit; the workspace's share is the whole store.
    gw = await startGateway({ channels: { a: channel(fake.url) }, files: { 'routes/cache.yaml': routes }, extraConfig: 'cache:\n  maxBytes: 40000\n  maxWorkspaceBytes: 40000\n', listen: true });
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
  });
  const notAdmitted = async () => {
    const text = await gw.services.metrics.registry.metrics();
    return Number(/^gateway_response_cache_not_admitted_total (\d+)/m.exec(text)?.[1]);
  };

  it('stores every answer until full, then one asked once evicts nothing, one asked twice is stored, a no-cache one is stored', async () => {
    const memory = gw.services.responseCache.store.memory!;
    // Filled one answer at a time while there is room: each first miss is stored.
    let filled = 0;
    while (!memory.full(gw.workspace.id)) expect((await ask(gw, gw.key, 'cached-chat', `filling question ${filled++}`)).cache).toBe('miss');
    const held = memory.size;
    expect(held).toBe(filled);
    expect(await notAdmitted()).toBe(0);

    // A flood of requests asked once: answered (misses), none stored, nothing evicted.
    for (let i = 0; i < 60; i++) expect((await ask(gw, gw.key, 'cached-chat', `one-off question ${i}`)).cache).toBe('miss');
    expect(memory.evictions).toBe(0);
    expect(memory.size).toBe(held);
    expect(await notAdmitted()).toBe(60);
    fake.reset();
    for (let i = 0; i < filled; i++) expect((await ask(gw, gw.key, 'cached-chat', `filling question ${i}`)).cache).toBe('hit');
    expect(chatCalls()).toBe(0);

    // Asked a second time, a request's answer is stored (evicting the least recently used: filling question 0); the third time is a hit.
    expect((await ask(gw, gw.key, 'cached-chat', 'one-off question 7')).cache).toBe('miss');
    expect(memory.evictions).toBe(1);
    expect(await ask(gw, gw.key, 'cached-chat', 'one-off question 7')).toMatchObject({ cache: 'hit', status: 200 });
    expect(chatCalls()).toBe(1);
    expect((await ask(gw, gw.key, 'cached-chat', 'filling question 0')).cache).toBe('miss');

    // A client's no-cache asks upstream and stores the fresh answer, first miss or not.
    const fresh = await client(gw, gw.key).chat.completions.create({ model: 'cached-chat', temperature: 0, messages: [{ role: 'user', content: 'a question asked with no-cache' }] }, { headers: { 'cache-control': 'no-cache' } }).withResponse();
    expect(fresh.response.headers.get('x-cache')).toBe('miss');
    expect((await ask(gw, gw.key, 'cached-chat', 'a question asked with no-cache')).cache).toBe('hit');
  });
});

describe('a Redis that stops answering', () => {
  let gw: TestGateway;
  let relay: StallingRelay;
  let clock = Date.parse('2026-11-29T00:00:00Z');
  beforeAll(async () => {
    relay = new StallingRelay();
    await relay.start();
    gw = await startGateway({
      channels: { a: channel(fake.url) },
      files: { 'routes/cache.yaml': routes },
      extraConfig: `cache:\n  store: redis\n  url: redis://127.0.0.1:${relay.port}\n  timeoutMs: 300\n  namespace: bounds-${process.pid}-${relay.port}\n`,
      overrides: { now: () => clock },
      listen: true,
    });
    // Connected before the tests (the store connects on first use).
    await gw.services.responseCache.store.read('warm-up');
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await relay?.close();
  });

  it('costs one request one timeout, then skips Redis (nothing sent) until the back-off ends; a probe finds it again', async () => {
    relay.stalled = true;
    const first = await ask(gw, gw.key, 'faq', 'how tall is the tallest tower');
    expect(first).toMatchObject({ status: 200, cache: 'miss' });
    const sentWhileStalled = relay.heldBytes;
    expect(sentWhileStalled).toBeGreaterThan(0);
    // Semantic lookups (exact key, shared vectors, nearest entry) and the writes of their answers: none reaches Redis.
    for (const q of ['how deep is the deepest lake', 'how long is the longest river', 'how old is the oldest tree']) {
      expect(await ask(gw, gw.key, 'faq', q)).toMatchObject({ status: 200, cache: 'miss' });
    }
    expect(relay.heldBytes).toBe(sentWhileStalled);
    expect(gw.services.responseCache.store.guard!.skipped).toBeGreaterThan(6);
    // Redis answers again; past the longest back-off, the next request probes it and the cache works again.
    relay.resume();
    clock += 60_000;
    expect((await ask(gw, gw.key, 'cached-chat', 'asked once redis answers')).cache).toBe('miss');
    let again: string | null = null;
    for (let i = 0; i < 50 && again !== 'hit'; i++) {
      again = (await ask(gw, gw.key, 'cached-chat', 'asked once redis answers')).cache;
      if (again !== 'hit') await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(again).toBe('hit');
  }, 30_000);
});
