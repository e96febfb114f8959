// The semantic cache (a route's `cache.semantic`, docs/caching.md) through HTTP with the openai SDK on loopback fakes:
// a near-identical one-message question is answered from the stored answer of the earlier one (the chat upstream sees
// one call), each lookup's embedding billed as the request's own; a different question, a conversation of several
// turns, a request with tools and another workspace never are; check-config names an unknown embeddings model.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../src/base/errors.js';
import { loadConfig } from '../src/compile/load-config.js';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

let fake: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;
const embedded: string[] = [];

const routes = `
- id: faq
  cache: { ttlSeconds: 3600, semantic: { model: emb, threshold: 0.9 } }
  targets: [{ model: alpha }]
`;

/**
 * A bag of words hashed into 64 dimensions (case and punctuation left out): texts with the same words point the same
 * way, others mostly not. The answer is OpenAI's embeddings object (platform.openai.com/docs/api-reference/embeddings).
 */
function bagOfWords(text: string): number[] {
  const vector = new Array<number>(64).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 0;
    for (const c of word) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    vector[h % 64] += 1;
  }
  return vector;
}

beforeAll(async () => {
  fake = await FakeUpstream.start();
  fake.route((req, res) => {
    if (req.method !== 'POST' || req.path !== '/v1/embeddings') return false;
    const input = String(req.body.input);
    embedded.push(input);
    json(res, 200, { object: 'list', data: [{ object: 'embedding', index: 0, embedding: bagOfWords(input) }], model: req.body.model, usage: { prompt_tokens: 8, total_tokens: 8 } });
    return true;
  });
  gw = await startGateway({
    channels: {
      a: `id: a\nprotocol: openai-chat\nbaseUrl: ${fake.url}/v1\nmodels:\n  - id: alpha\n    upstream: up-alpha\n    kind: chat\n    price: { inputPerMillion: 1000, outputPerMillion: 2000 }\n  - id: emb\n    upstream: text-embedding-3-small\n    kind: embedding\n    price: { inputPerMillion: 1000 }\n`,
    },
    files: { 'routes/faq.yaml': routes },
    listen: true,
  });
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});
beforeEach(() => {
  fake.reset();
  embedded.length = 0;
  fake.chat = { text: 'Paris.', usage: { prompt_tokens: 10, completion_tokens: 2 } };
});

const chatCalls = () => fake.requests.filter((r) => r.path.endsWith('/chat/completions')).length;
const ask = (content: string, extra: Record<string, unknown> = {}, client = openai) =>
  client.chat.completions.create({ model: 'faq', temperature: 0, max_tokens: 8, messages: [{ role: 'user', content }], ...extra }).withResponse();

async function ledgerOf(requestId: string) {
  for (let i = 0; i < 50; i++) {
    await gw.services.spend.commitQueued?.();
    const rows = await gw.services.db.selectFrom('usage_ledger').selectAll().where('request_id', '=', requestId).execute();
    if (rows.length >= 2) return rows;
    await new Promise((r) => setTimeout(r, 20));
  }
  return gw.services.db.selectFrom('usage_ledger').selectAll().where('request_id', '=', requestId).execute();
}

describe('semantic cache', () => {
  it('answers a near-identical question from the earlier answer; each lookup embedded and billed as its request', async () => {
    const first = await ask('What is the capital of France?');
    expect(first.response.headers.get('x-cache')).toBe('miss');
    const second = await ask('what is the capital of france');
    expect(second.response.headers.get('x-cache')).toBe('hit');
    expect(second.response.headers.get('x-cache-match')).toBe('semantic');
    expect(Number(second.response.headers.get('x-cache-similarity'))).toBeGreaterThanOrEqual(0.9);
    expect(second.data.choices[0].message.content).toBe('Paris.');
    expect(chatCalls()).toBe(1);
    expect(embedded).toEqual(['What is the capital of France?', 'what is the capital of france']);
    const rows = await ledgerOf(second.response.headers.get('x-request-id')!);
    expect(rows.map((r) => r.kind).sort()).toEqual(['cache_hit', 'embedding']);
    expect(Number(rows.find((r) => r.kind === 'embedding')!.cost_micros)).toBe(8000);
  });

  it('sends a different question upstream', async () => {
    await ask('How tall is the Eiffel Tower?');
    const other = await ask('Which river runs through Paris?');
    expect(other.response.headers.get('x-cache')).toBe('miss');
    expect(other.response.headers.get('x-cache-match')).toBeNull();
    expect(chatCalls()).toBe(2);
  });

  it('never looks up a conversation of several turns or a request with tools (no embedding is made)', async () => {
    await ask('Name a French cheese.');
    const turns = await openai.chat.completions
      .create({ model: 'faq', temperature: 0, max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello' }, { role: 'user', content: 'Name a French cheese.' }] })
      .withResponse();
    expect(turns.response.headers.get('x-cache')).toBe('miss');
    const tools = await ask('name a french cheese', { tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }] });
    expect(tools.response.headers.get('x-cache')).toBe('miss');
    expect(embedded).toEqual(['Name a French cheese.']);
    expect(chatCalls()).toBe(3);
  });

  it('never answers one workspace from another workspace\'s question', async () => {
    await ask('What is the boiling point of water at sea level?');
    const elsewhere = await gw.newWorkspace('other-team');
    const client = new OpenAI({ apiKey: await gw.newKey({ workspace: elsewhere }), baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const theirs = await ask('what is the boiling point of water at sea level', {}, client);
    expect(theirs.response.headers.get('x-cache')).toBe('miss');
    expect(chatCalls()).toBe(2);
  });

  it('is refused by check-config when its model is not one this gateway serves, at file:line:col', async () => {
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const file = join(gw.dir, 'routes', 'faq.yaml');
    writeFileSync(file, routes.replace('model: emb,', 'model: no-such-embedder,'));
    const error = await loadConfig(join(gw.dir, 'config.yaml')).catch((e: unknown) => e);
    writeFileSync(file, routes);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.join('\n')).toMatch(/faq\.yaml:3:\d+ \/0\/cache\/semantic\/model no channel serves model "no-such-embedder"/);
  });
});
