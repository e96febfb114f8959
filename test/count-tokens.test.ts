// POST /v1/messages/count_tokens (issue 21): passed through to Anthropic-protocol channels, counted locally (and marked
// approximate) elsewhere; scope llm.chat; never billed. Through the official Anthropic SDK.
import Anthropic from '@anthropic-ai/sdk';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, testModels, type TestGateway } from './kit/gateway.js';

let fake: FakeUpstream;
let gw: TestGateway;
let anthropic: Anthropic;

const claudeChannel = (baseUrl: string) => `id: claude
protocol: anthropic-messages
baseUrl: ${baseUrl}
models:
  - id: fake-claude
    upstream: upstream-claude
    kind: chat
    price: { inputPerMillion: 3.0, outputPerMillion: 15.0 }
`;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: testModels.fakeChat }), claude: claudeChannel(`${fake.url}/anthropic`) }, listen: true });
  anthropic = new Anthropic({ apiKey: gw.key, baseURL: gw.url, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});
beforeEach(() => fake.reset());

const ledgerRows = async () => (await gw.services.db.selectFrom('usage_ledger').selectAll().execute()).length;

describe('POST /v1/messages/count_tokens', () => {
  it('passes through to an Anthropic channel: model mapped, beta header forwarded, the upstream count answered, nothing billed', async () => {
    const before = await ledgerRows();
    fake.next({ kind: 'json', body: { input_tokens: 42 } });
    const client = new Anthropic({ apiKey: gw.key, baseURL: gw.url, maxRetries: 0, defaultHeaders: { 'anthropic-beta': 'token-counting-2024-11-01' } });
    const res = await client.messages.countTokens({ model: 'fake-claude', system: 'Be brief.', messages: [{ role: 'user', content: 'Hello' }] }).withResponse();
    expect(res.data.input_tokens).toBe(42);
    expect(res.response.headers.get('x-token-count')).toBe('upstream');
    expect(fake.last!.path).toBe('/anthropic/messages/count_tokens');
    expect(fake.last!.body).toEqual({ model: 'upstream-claude', system: 'Be brief.', messages: [{ role: 'user', content: 'Hello' }] });
    expect(fake.last!.headers['anthropic-beta']).toBe('token-counting-2024-11-01');
    expect(await ledgerRows()).toBe(before);
  });

  it('counts locally for an OpenAI-protocol channel, marked approximate, without calling the upstream', async () => {
    const text = 'Hello, world! This is a test of counting.';
    const res = await anthropic.messages.countTokens({ model: 'fake-chat', system: 'Be brief.', messages: [{ role: 'user', content: [{ type: 'text', text }] }] }).withResponse();
    // 3 per request + 4 per message, plus the texts in o200k_base.
    expect(res.data.input_tokens).toBe(3 + 4 + countTokens('Be brief.') + countTokens(text));
    expect(res.response.headers.get('x-token-count')).toBe('approximate; encoding=o200k_base');
    expect(fake.requests).toHaveLength(0);
  });

  it('answers under /api/v1 too, and keeps upstream errors in the Anthropic envelope', async () => {
    fake.next({ kind: 'status', status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } });
    const client = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api`, maxRetries: 0 });
    const err = await client.messages.countTokens({ model: 'fake-claude', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.OverloadedError);
    expect(fake.last!.path).toBe('/anthropic/messages/count_tokens');
  });

  it('needs the llm.chat scope and a valid body', async () => {
    const evaluateOnly = await gw.newKey({ scopes: ['llm.evaluate'] });
    const denied = await new Anthropic({ apiKey: evaluateOnly, baseURL: gw.url, maxRetries: 0 }).messages.countTokens({ model: 'fake-chat', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(Anthropic.PermissionDeniedError);
    const bad = await gw.app.inject({ method: 'POST', url: '/v1/messages/count_tokens', headers: { 'x-api-key': gw.key }, payload: { model: 'fake-chat' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().type).toBe('error');
    expect(fake.requests).toHaveLength(0);
  });
});
