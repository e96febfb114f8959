// The response cache (routes' `cache:`, docs/caching.md) through HTTP with the official SDKs on loopback fakes: a
// repeated chat, Messages, Responses and embeddings request is a hit (the upstream sees one), streamed or not; a hit's
// charge is its own ledger kind; the client's Cache-Control is obeyed; workspaces never share; a cut stream is not kept.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { EMBEDDING_INPUT, FakeFamilies } from './kit/fake-families.js';
import { installResponses } from './kit/fake-responses.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

let fake: FakeUpstream;
let families: FakeFamilies;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;
let clock = Date.parse('2026-11-28T00:00:00Z');

const routes = `
- id: cached-chat
  cache: { ttlSeconds: 3600 }
  targets: [{ model: alpha }]
- id: free-past-cap
  cache: { ttlSeconds: 3600, hitsPastCap: true }
  targets: [{ model: alpha }]
- id: half-price
  cache: { ttlSeconds: 3600, hitPrice: 0.5, hitTokens: reported }
  targets: [{ model: alpha }]
- id: sampled-ok
  cache: { ttlSeconds: 3600, allow: [sampled] }
  targets: [{ model: alpha }]
- id: short-lived
  cache: { ttlSeconds: 60 }
  targets: [{ model: alpha }]
- id: outer
  targets: [{ route: cached-chat }]
- id: cached-outer
  cache: { ttlSeconds: 3600 }
  targets: [{ route: plain-chat }]
- id: plain-chat
  targets: [{ model: alpha }]
- id: cached-claude
  cache: { ttlSeconds: 3600 }
  targets: [{ model: claude-x }]
- id: cached-embed
  cache: { ttlSeconds: 3600 }
  targets: [{ model: emb }]
`;

beforeAll(async () => {
  [fake, families] = await Promise.all([FakeUpstream.start(), FakeFamilies.start()]);
  installResponses(fake);
  gw = await startGateway({
    channels: {
      a: `id: a\nprotocol: openai-chat\nbaseUrl: ${fake.url}/v1\nmodels:\n  - id: alpha\n    upstream: up-alpha\n    kind: chat\n    price: { inputPerMillion: 1000, outputPerMillion: 2000 }\n  - id: beta\n    upstream: up-beta\n    kind: chat\n    price: { inputPerMillion: 1000, outputPerMillion: 2000 }\n    cache: { ttlSeconds: 600 }\n`,
      claude: `id: claude\nprotocol: anthropic-messages\nbaseUrl: ${fake.url}/v1\ncredential:\n  env: FAKE_ANTHROPIC_KEY\nmodels:\n  - id: claude-x\n    upstream: up-claude\n    kind: chat\n    price: { inputPerMillion: 1000, outputPerMillion: 2000 }\n`,
      emb: `id: emb\nprotocol: openai-chat\nbaseUrl: ${families.url}/v1\nmodels:\n  - id: emb\n    upstream: text-embedding-3-small\n    kind: embedding\n    price: { inputPerMillion: 1000 }\n`,
    },
    files: { 'routes/cache.yaml': routes },
    env: { FAKE_ANTHROPIC_KEY: 'sk-ant-upstream' },
    overrides: { now: () => clock },
    listen: true,
  });
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api`, maxRetries: 0 });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});
beforeEach(() => {
  fake.reset();
  families.requests.length = 0;
  fake.chat = { text: 'cached words', usage: { prompt_tokens: 10, completion_tokens: 5 } };
});

let unique = 0;
/** A question no earlier test asked (entries live for the whole file). */
const question = () => `question ${++unique}`;
const upstreamCalls = (path: string) => fake.requests.filter((r) => r.path.endsWith(path)).length;

const chat = (model: string, content: string, headers: Record<string, string> = {}, extra: Record<string, unknown> = { temperature: 0 }, key = gw.key) =>
  gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${key}`, ...headers }, payload: { model, max_tokens: 8, messages: [{ role: 'user', content }], ...extra } });

const ledgerOf = async (requestId: string) => {
  for (let i = 0; i < 50; i++) {
    const rows = await gw.services.db.selectFrom('usage_ledger').selectAll().where('request_id', '=', requestId).execute();
    if (rows.length) return rows;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return [];
};

describe('exact cache, chat completions', () => {
  it('answers a repeated request from the cache: the upstream sees one, the second says x-cache: hit and its age', async () => {
    const q = question();
    const first = await chat('cached-chat', q);
    expect(first.statusCode).toBe(200);
    expect(first.headers['x-cache']).toBe('miss');
    clock += 7000;
    const second = await chat('cached-chat', q);
    expect(second.statusCode).toBe(200);
    expect(second.headers['x-cache']).toBe('hit');
    expect(second.headers.age).toBe('7');
    expect(upstreamCalls('/chat/completions')).toBe(1);
    const [a, b] = [first.json(), second.json()];
    expect(b.choices).toEqual(a.choices);
    expect(b.usage).toEqual(a.usage);
    expect(a.cost.amount).toBeGreaterThan(0);
    expect(b.cost).toEqual({ amount: 0, currency: 'USD' });
  });

  it('keys the canonical body: member order and whitespace do not matter, stream flags and user are left out', async () => {
    const q = question();
    const headers = { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' };
    await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers, payload: `{"model":"cached-chat","temperature":0,"max_tokens":8,"messages":[{"role":"user","content":"${q}"}]}` });
    const again = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers, payload: `{ "messages" : [ { "content":"${q}", "role":"user" } ],\n "max_tokens": 8, "temperature": 0, "user": "someone", "model": "cached-chat" }` });
    expect(again.headers['x-cache']).toBe('hit');
    const other = await chat('cached-chat', q, {}, { temperature: 0, top_p: 0.5 });
    expect(other.headers['x-cache']).toBe('miss');
  });

  it('does not cache a sampled request (temperature above 0, or none, without a seed) unless the route allows it', async () => {
    const q = question();
    for (const extra of [{}, { temperature: 0.7 }]) {
      const res = await chat('cached-chat', q, {}, extra);
      expect(res.headers['x-cache']).toBe('bypass');
    }
    await chat('cached-chat', q, {}, { temperature: 0.7, seed: 4 });
    expect((await chat('cached-chat', q, {}, { temperature: 0.7, seed: 4 })).headers['x-cache']).toBe('hit');
    await chat('sampled-ok', q, {}, {});
    expect((await chat('sampled-ok', q, {}, {})).headers['x-cache']).toBe('hit');
    expect(upstreamCalls('/chat/completions')).toBe(4);
  });

  it('does not cache a conversation carrying a tool result', async () => {
    const messages = [
      { role: 'user', content: question() },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'result' },
    ];
    const send = () => gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'cached-chat', temperature: 0, messages } });
    expect((await send()).headers['x-cache']).toBe('bypass');
    expect((await send()).headers['x-cache']).toBe('bypass');
  });

  it('obeys no-store (neither read nor written) and no-cache (asked again upstream, the fresh answer stored)', async () => {
    const q = question();
    expect((await chat('cached-chat', q, { 'cache-control': 'no-store' })).headers['x-cache']).toBe('bypass');
    expect((await chat('cached-chat', q)).headers['x-cache']).toBe('miss');
    expect((await chat('cached-chat', q, { 'cache-control': 'no-store' })).headers['x-cache']).toBe('bypass');
    fake.chat = { text: 'fresher words', usage: { prompt_tokens: 10, completion_tokens: 5 } };
    const revalidated = await chat('cached-chat', q, { 'cache-control': 'no-cache' });
    expect(revalidated.headers['x-cache']).toBe('miss');
    const hit = await chat('cached-chat', q);
    expect(hit.headers['x-cache']).toBe('hit');
    expect(hit.json().choices[0].message.content).toBe('fresher words');
    // The two no-store requests, the miss and the no-cache one.
    expect(upstreamCalls('/chat/completions')).toBe(4);
  });

  it('answers only-if-cached from the store, else 504 without asking the upstream', async () => {
    const q = question();
    const missed = await chat('cached-chat', q, { 'cache-control': 'only-if-cached' });
    expect(missed.statusCode).toBe(504);
    expect(missed.json().error).toMatchObject({ code: 'cache_miss' });
    expect(upstreamCalls('/chat/completions')).toBe(0);
    await chat('cached-chat', q);
    const hit = await chat('cached-chat', q, { 'cache-control': 'only-if-cached' });
    expect(hit.statusCode).toBe(200);
    expect(hit.headers['x-cache']).toBe('hit');
    expect(upstreamCalls('/chat/completions')).toBe(1);
  });

  it('serves no answer older than the client\'s max-age, and no entry past its TTL (or a shorter x-cache-ttl)', async () => {
    const q = question();
    await chat('cached-chat', q);
    clock += 30_000;
    expect((await chat('cached-chat', q, { 'cache-control': 'max-age=10' })).headers['x-cache']).toBe('miss');
    expect((await chat('cached-chat', q, { 'cache-control': 'max-age=10' })).headers['x-cache']).toBe('hit');
    const short = question();
    await chat('short-lived', short, { 'x-cache-ttl': '1' });
    // The memory store judges TTLs by the services' clock: a second and a bit later, the entry is gone.
    clock += 1100;
    expect((await chat('short-lived', short)).headers['x-cache']).toBe('miss');
  });

  it('never shares an entry between two workspaces', async () => {
    const q = question();
    const other = await gw.newKey({ workspace: await gw.newWorkspace('other') });
    await chat('cached-chat', q);
    expect((await chat('cached-chat', q, {}, undefined, other)).headers['x-cache']).toBe('miss');
    expect((await chat('cached-chat', q, {}, undefined, other)).headers['x-cache']).toBe('hit');
  });

  it('caches a model whose channel entry says cache:, for requests that name it, as a route would', async () => {
    const q = question();
    expect((await chat('beta', q)).headers['x-cache']).toBe('miss');
    const hit = await chat('beta', q);
    expect(hit.headers['x-cache']).toBe('hit');
    expect(hit.json().model).toBe('beta');
    expect(upstreamCalls('/chat/completions')).toBe(1);
    // A model without cache: is never looked up (no x-cache header at all).
    expect((await chat('alpha', q)).headers['x-cache']).toBeUndefined();
  });

  it('caches on the route the client named, not on one it reaches through another', async () => {
    const q = question();
    await chat('outer', q);
    expect((await chat('outer', q)).headers['x-cache']).toBeUndefined();
    await chat('cached-outer', q);
    expect((await chat('cached-outer', q)).headers['x-cache']).toBe('hit');
  });
});

describe('money and limits', () => {
  it('books a hit as a ledger row of kind cache_hit, free by default, and GET /v1/usage counts it apart', async () => {
    const q = question();
    const miss = await chat('cached-chat', q);
    const hit = await chat('cached-chat', q);
    const [missRow] = await ledgerOf(miss.headers['x-request-id'] as string);
    const [hitRow] = await ledgerOf(hit.headers['x-request-id'] as string);
    expect(missRow.kind).toBe('chat');
    expect(hitRow).toMatchObject({ kind: 'cache_hit', model: 'alpha', channel: 'a', input_tokens: 0, output_tokens: 0 });
    expect(Number(hitRow.cost_micros)).toBe(0);
    const usage = (await gw.app.inject({ method: 'GET', url: '/v1/usage', headers: { authorization: `Bearer ${gw.key}` } })).json();
    expect(usage.totals[0].cache_hits).toBeGreaterThanOrEqual(1);
    expect(usage.data.some((row: { cache_hits: number }) => row.cache_hits > 0)).toBe(true);
  });

  it('charges a priced hit its fraction of the original cost, with the tokens the route reports', async () => {
    const q = question();
    const miss = await chat('half-price', q);
    const hit = await chat('half-price', q);
    expect(hit.headers['x-cache']).toBe('hit');
    const [missRow] = await ledgerOf(miss.headers['x-request-id'] as string);
    const [hitRow] = await ledgerOf(hit.headers['x-request-id'] as string);
    expect(Number(hitRow.cost_micros)).toBe(Math.round(Number(missRow.cost_micros) / 2));
    expect(hitRow).toMatchObject({ kind: 'cache_hit', input_tokens: 10, output_tokens: 5 });
    expect(hit.json().cost.amount).toBe(Number(hitRow.cost_micros) / 1e6);
  });

  it('says in GET /v1/usage what hits saved: the replayed answers\' cost less what the hits were charged', async () => {
    const key = await gw.newKey();
    const q = question();
    const miss = await chat('half-price', q, {}, undefined, key);
    await chat('half-price', q, {}, undefined, key);
    await chat('half-price', q, {}, undefined, key);
    const [missRow] = await ledgerOf(miss.headers['x-request-id'] as string);
    const original = Number(missRow.cost_micros);
    const usage = (await gw.app.inject({ method: 'GET', url: '/v1/usage', headers: { authorization: `Bearer ${key}` } })).json();
    const keyId = (await gw.services.db.selectFrom('api_keys').select('id').where('id', '=', missRow.key_id).executeTakeFirstOrThrow()).id;
    const row = usage.data.find((r: { key_id: string; cache_hits: number }) => r.key_id === keyId && r.cache_hits > 0);
    expect(row).toMatchObject({ cache_hits: 2 });
    expect(row.cache_saved).toBeCloseTo((2 * (original - Math.round(original / 2))) / 1e6, 9);
  });

  it('says hit or miss on the request-log row, with the hit\'s own cost, and counts hits, bytes and savings in the metrics', async () => {
    const q = question();
    const miss = await chat('cached-chat', q);
    const hit = await chat('cached-chat', q);
    const rowOf = async (requestId: string) => {
      for (let i = 0; i < 100; i++) {
        const row = await gw.services.db.selectFrom('request_logs').selectAll().where('request_id', '=', requestId).executeTakeFirst();
        if (row) return row;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`no request-log row for ${requestId}`);
    };
    const [missRow, hitRow] = [await rowOf(miss.headers['x-request-id'] as string), await rowOf(hit.headers['x-request-id'] as string)];
    expect(missRow.cache).toBe('miss');
    expect(Number(missRow.cost_micros)).toBeGreaterThan(0);
    expect(hitRow).toMatchObject({ cache: 'hit', model: 'alpha', status: 200 });
    expect(Number(hitRow.cost_micros)).toBe(0);
    const text = await gw.services.metrics.registry.metrics();
    expect(text).toMatch(/gateway_response_cache_requests_total\{outcome="hit"\} [1-9]/);
    expect(text).toMatch(/gateway_response_cache_requests_total\{outcome="bypass"\} [1-9]/);
    expect(text).toMatch(/gateway_response_cache_bytes [1-9]/);
    expect(text).toMatch(/gateway_response_cache_saved_total\{currency="USD"\} 0\.\d*[1-9]/);
  });

  it('refuses a hit, even a free one, to a key whose cap is spent', async () => {
    const q = question();
    await chat('cached-chat', q);
    const capped = await gw.newKey({ spendCapMicros: 0 });
    const refused = await chat('cached-chat', q, {}, undefined, capped);
    expect(refused.statusCode).toBe(402);
  });

  it('serves a free hit past a spent cap where the route says hitsPastCap, and still refuses that key a miss', async () => {
    const q = question();
    await chat('free-past-cap', q);
    const capped = await gw.newKey({ spendCapMicros: 0 });
    const hit = await chat('free-past-cap', q, {}, undefined, capped);
    expect(hit.statusCode).toBe(200);
    expect(hit.headers['x-cache']).toBe('hit');
    const rows = await ledgerOf(hit.headers['x-request-id'] as string);
    expect(rows).toMatchObject([{ kind: 'cache_hit', cost_micros: 0 }]);
    expect((await chat('free-past-cap', question(), {}, undefined, capped)).statusCode).toBe(402);
  });
});

describe('the official SDKs, streamed and not', () => {
  /** A streamed chat request through the openai SDK: the text it streams, and whether the cache answered it. */
  const streamedChat = async (q: string) => {
    const body = { model: 'cached-chat', temperature: 0, stream: true as const, messages: [{ role: 'user' as const, content: q }] };
    const { data, response } = await openai.chat.completions.create(body).withResponse();
    let text = '';
    for await (const chunk of data) text += chunk.choices[0]?.delta.content ?? '';
    return { text, cache: response.headers.get('x-cache') };
  };

  it('openai: a streamed request is served from a cached JSON answer as chunks, usage in the last', async () => {
    const q = question();
    const body = { model: 'cached-chat', temperature: 0, messages: [{ role: 'user' as const, content: q }] };
    const { data: first, response } = await openai.chat.completions.create(body).withResponse();
    expect(response.headers.get('x-cache')).toBe('miss');
    const { data: stream, response: streamed } = await openai.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }).withResponse();
    expect(streamed.headers.get('x-cache')).toBe('hit');
    let text = '';
    let usage;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(first.choices[0].message.content);
    expect(usage).toEqual(first.usage);
    expect(upstreamCalls('/chat/completions')).toBe(1);
  });

  it('openai: a streamed miss is kept once complete and replayed to the next stream', async () => {
    const q = question();
    expect(await streamedChat(q)).toEqual({ text: 'cached words', cache: 'miss' });
    expect(await streamedChat(q)).toEqual({ text: 'cached words', cache: 'hit' });
    expect(upstreamCalls('/chat/completions')).toBe(1);
  });

  it('keeps a streamed miss whose events arrive apart whole, and replays every event of it', async () => {
    // Each event its own write, 20 ms apart: the relay writes them one by one, and the cache must see every write, not
    // only the first (a first-write note once put back the write it wrapped, dropping the cache's tap after one event).
    const q = question();
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      ({ data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'up-alpha', choices: [{ index: 0, delta, finish_reason: finish }] } });
    fake.next({ kind: 'sse', events: [chunk({ role: 'assistant', content: 'kept ' }), chunk({ content: 'in ' }), chunk({ content: 'parts' }), chunk({}, 'stop'), '[DONE]'], delayMs: 20 });
    expect(await streamedChat(q)).toEqual({ text: 'kept in parts', cache: 'miss' });
    expect(await streamedChat(q)).toEqual({ text: 'kept in parts', cache: 'hit' });
    expect(upstreamCalls('/chat/completions')).toBe(1);
  });

  it('does not keep a stream the upstream cut', async () => {
    const q = question();
    const chunk = (content: string) => JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'up-alpha', choices: [{ index: 0, delta: { content }, finish_reason: null }] });
    fake.next({ kind: 'sse', events: [chunk('half an ')], truncate: true });
    const cut = await chat('cached-chat', q, {}, { temperature: 0, stream: true });
    expect(cut.body).not.toContain('[DONE]');
    const again = await chat('cached-chat', q, {}, { temperature: 0, stream: true });
    expect(again.headers['x-cache']).toBe('miss');
    expect(again.body).toContain('[DONE]');
    expect(upstreamCalls('/chat/completions')).toBe(2);
  });

  it('anthropic: a repeated Messages request is a hit, and a streamed one parses like a live stream', async () => {
    const q = question();
    const body = { model: 'cached-claude', max_tokens: 16, temperature: 0, messages: [{ role: 'user' as const, content: q }] };
    const first = await anthropic.messages.create(body);
    const { data: again, response } = await anthropic.messages.create(body).withResponse();
    expect(response.headers.get('x-cache')).toBe('hit');
    expect(again.content).toEqual(first.content);
    const stream = anthropic.messages.stream(body);
    const final = await stream.finalMessage();
    expect(final.content).toEqual(first.content);
    expect(final.usage.output_tokens).toBe(first.usage.output_tokens);
    expect(final.stop_reason).toBe(first.stop_reason);
    expect(upstreamCalls('/messages')).toBe(1);
  });

  it('openai: a repeated Responses request is a hit, streamed or not', async () => {
    const q = question();
    const body = { model: 'cached-chat', temperature: 0, input: q };
    const first = await openai.responses.create(body);
    const { data: again, response } = await openai.responses.create(body).withResponse();
    expect(response.headers.get('x-cache')).toBe('hit');
    expect(again.output_text).toBe(first.output_text);
    const stream = await openai.responses.create({ ...body, stream: true });
    const types: string[] = [];
    let completed;
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.completed') completed = event.response;
    }
    expect(types[0]).toBe('response.created');
    expect(types).toContain('response.output_text.delta');
    expect(completed!.usage).toEqual(first.usage);
    expect(completed!.output_text ?? completed!.output).toBeDefined();
    expect(upstreamCalls('/responses')).toBe(1);
  });

  it('openai: a repeated embeddings request is a hit', async () => {
    const input = `${EMBEDDING_INPUT} ${question()}`;
    const first = await openai.embeddings.create({ model: 'cached-embed', input });
    const { data: again, response } = await openai.embeddings.create({ model: 'cached-embed', input }).withResponse();
    expect(response.headers.get('x-cache')).toBe('hit');
    expect(again.data).toEqual(first.data);
    expect(families.requests.filter((r) => r.path === '/v1/embeddings')).toHaveLength(1);
  });
});
