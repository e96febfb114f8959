// Regression tests for the billing defects found when the gateway was tried as an attacker would: each bypassed a cap or
// billed wrongly before the pipeline (one settle stage, usage read once per protocol operation, the reservation as a ceiling).
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { hangUpAfter, holdingStream } from './kit/streams.js';
import { installNativeEvaluate, type NativeEvaluateScript } from './kit/fake-evaluate.js';
import { chatChannel, startGateway, testModels, type TestGateway } from './kit/gateway.js';
import { issueApiKey } from '../src/auth/keys.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';

let fake: FakeUpstream;
let native: NativeEvaluateScript;
let gw: TestGateway;

const anthropicChannel = (baseUrl: string) => `id: claude
protocol: anthropic-messages
baseUrl: ${baseUrl}
models:
  - id: fake-claude
    upstream: upstream-claude
    kind: chat
    price: { inputPerMillion: 3.0, outputPerMillion: 15.0, cachedInputPerMillion: 0.3 }
`;

const nativeChannel = (baseUrl: string) => `id: system-one
protocol: evaluate-native
baseUrl: ${baseUrl}
models:
  - id: eval-native
    kind: evaluation
    price: { inputPerMillion: 1.0, outputPerMillion: 4.0 }
`;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  native = installNativeEvaluate(fake);
  gw = await startGateway({
    channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: testModels.fakeChat }), claude: anthropicChannel(`${fake.url}/anthropic`), 'system-one': nativeChannel(`${fake.url}/api/v1`) },
    listen: true,
  });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});
beforeEach(() => fake.reset());

const ledgerOf = (requestId: string) => ledgerForRequest(gw.services.db, requestId);
const balance = (keyId: string) => gw.services.spend.balance('key', keyId, Date.now());
const chat = (key: string, body: Record<string, unknown>) =>
  gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, payload: { model: 'fake-chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], ...body } });

const anthropicStart = (usage: Record<string, number>) => [
  { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'upstream-claude', content: [], stop_reason: null, stop_sequence: null, usage } } },
  { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
  { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'partial' } } },
];

describe('the estimate bounds the whole request body', () => {
  it.each(['response_format', 'functions', 'prediction'])('refuses 2 MiB in %s on a key capped at one cent with 402, before calling the upstream', async (field) => {
    const key = await issueApiKey(gw.services.db, gw.workspace, { spendCapMicros: 10_000 });
    const filler = 'x'.repeat(2 * 1024 * 1024);
    const value = field === 'functions' ? [{ name: 'f', description: filler, parameters: { type: 'object' } }] : field === 'prediction' ? { type: 'content', content: filler } : { type: 'json_schema', json_schema: { name: 'x', description: filler, schema: { type: 'object' } } };
    const res = await chat(key.key, { [field]: value });
    expect(res.statusCode).toBe(402);
    expect(fake.requests).toHaveLength(0);
    expect(await balance(key.id)).toEqual({ spentMicros: 0, reservedMicros: 0 });
  });
});

describe('billing follows the usage the upstream reports', () => {
  it('charges reported usage above the reservation in full, records the overage, and refuses the next request: the cap is overshot by that one request', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace, { spendCapMicros: 10_000 });
    fake.next({ kind: 'json', body: { id: 'c', object: 'chat.completion', created: 1, model: 'upstream-chat', choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason: 'stop' }], usage: { prompt_tokens: 120_000, completion_tokens: 10_000 } } });
    const res = await chat(key.key, {});
    expect(res.statusCode).toBe(200);
    const [row] = await ledgerOf(res.headers['x-request-id'] as string);
    // 120,000 input at 2.0 + 10,000 output at 10.0 = 0.34 USD reported (possible for a model without limits: within
    // billing.defaultLimits, 128,000 + 4,096), and charged; the answer's cost is the ledger's charge.
    expect(row.cost_micros).toBe(340_000);
    expect(res.json().cost).toEqual({ amount: 0.34, currency: 'USD' });
    const overage = Number(row.overage_micros);
    expect(overage).toBeGreaterThan(340_000 - 10_000);
    expect(overage).toBeLessThan(340_000);
    expect((await balance(key.id)).spentMicros).toBe(340_000);
    expect(await gw.services.metrics.registry.getSingleMetricAsString('gateway_overage_micros_total')).toContain(`model="fake-chat",channel="fake"} ${overage}`);
    // The cap is spent: the next request is refused before anything is sent.
    fake.reset();
    const next = await chat(key.key, {});
    expect(next.statusCode).toBe(402);
    expect(fake.requests).toHaveLength(0);
  });
});

/**
 * How long a hung-up stream's settlement may take to reach the ledger: the hang-up is seen on the socket's close, and
 * the settlement commits in the spend thread's next batch. On a loaded machine running the whole suite that once took
 * over vitest's default second.
 */
const SETTLED = { timeout: 5_000, interval: 20 };

describe('usage counts only once the protocol reports it as final', () => {
  it('charges the message_start usage plus the output streamed, not the reservation, when a Messages client hangs up after the first block (pass-through)', async () => {
    holdingStream(fake, anthropicStart({ input_tokens: 10, output_tokens: 1 }));
    const body = { model: 'fake-claude', max_tokens: 4000, stream: true, messages: [{ role: 'user', content: 'hi' }] };
    const requestId = await hangUpAfter(`${gw.url}/v1/messages`, { 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' }, body, (t) => t.includes('partial'));
    await vi.waitFor(async () => expect(await ledgerOf(requestId)).toHaveLength(1), SETTLED);
    const [row] = await ledgerOf(requestId);
    // 10 input tokens at 3.0 and the one streamed delta's tokens (its JSON at 4 characters a token) at 15.0; the
    // reservation would have counted all 4000 output tokens.
    expect(row.input_tokens).toBe(10);
    expect(row.output_tokens).toBeGreaterThanOrEqual(1);
    expect(row.output_tokens).toBeLessThan(40);
    expect(row.cost_micros).toBe(10 * 3 + row.output_tokens * 15);
  });

  it('charges the reservation through /v1/chat/completions to an Anthropic channel (a translated stream counts no output of its own)', async () => {
    holdingStream(fake, anthropicStart({ input_tokens: 10, output_tokens: 1 }));
    const body = { model: 'fake-claude', max_tokens: 4000, stream: true, messages: [{ role: 'user', content: 'hi' }] };
    const requestId = await hangUpAfter(`${gw.url}/v1/chat/completions`, { authorization: `Bearer ${gw.key}` }, body, (t) => t.includes('partial'));
    await vi.waitFor(async () => expect(await ledgerOf(requestId)).toHaveLength(1), SETTLED);
    expect((await ledgerOf(requestId))[0].cost_micros).toBeGreaterThan(4000 * 15);
  });

  it('charges the reported usage once message_delta carried the final counts', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': gw.key }, payload: { model: 'fake-claude', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.statusCode).toBe(200);
    const [row] = await ledgerOf(res.headers['x-request-id'] as string);
    // The fake's script: 12 input, 7 output at 3.0 / 15.0 per million.
    expect(row).toMatchObject({ input_tokens: 12, output_tokens: 7, cost_micros: 12 * 3 + 7 * 15 });
  });
});

describe('usage an upstream gets wrong', () => {
  const completion = (usage: unknown) => ({ id: 'c', object: 'chat.completion', created: 1, model: 'upstream-chat', choices: [{ index: 0, message: { role: 'assistant', content: 'x' }, finish_reason: 'stop' }], usage });

  it.each([
    ['negative', { prompt_tokens: -5, completion_tokens: 3 }],
    ['string', { prompt_tokens: '12', completion_tokens: 3 }],
    ['fractional', { prompt_tokens: 1.5, completion_tokens: 3 }],
  ])('answers 502 upstream_malformed for %s token counts and charges the reservation', async (_kind, usage) => {
    fake.next({ kind: 'json', body: completion(usage) });
    const res = await chat(gw.key, {});
    expect(res.statusCode).toBe(502);
    expect(res.json().error.code).toBe('upstream_malformed');
    const [row] = await ledgerOf(res.headers['x-request-id'] as string);
    expect(row.cost_micros).toBeGreaterThan(16 * 10);
  });

  it('ends the client stream with an error event when a streamed usage chunk has negative counts, and charges the reservation', async () => {
    fake.next({
      kind: 'sse',
      events: [
        { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-chat', choices: [{ index: 0, delta: { role: 'assistant', content: 'hi' }, finish_reason: null }] } },
        { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-chat', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] } },
        { data: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'upstream-chat', choices: [], usage: { prompt_tokens: -100, completion_tokens: 'lots' } } },
        '[DONE]',
      ],
    });
    const res = await chat(gw.key, { stream: true });
    expect(res.statusCode).toBe(200);
    const frames = res.body.split('\n\n').filter(Boolean);
    expect(frames.at(-1)).toContain('upstream_malformed');
    const [row] = await ledgerOf(res.headers['x-request-id'] as string);
    expect(row.cost_micros).toBeGreaterThan(16 * 10);
  });

  it('answers 502 when the upstream answers a stream request with plain JSON, instead of an empty 200', async () => {
    fake.next({ kind: 'json', body: completion({ prompt_tokens: 1, completion_tokens: 1 }) });
    const res = await chat(gw.key, { stream: true });
    expect(res.statusCode).toBe(502);
    expect(res.json().error.code).toBe('upstream_malformed');
  });

  it('answers 502 when the upstream answers a JSON array, instead of an object with keys "0", "1"', async () => {
    fake.next({ kind: 'json', body: [completion({ prompt_tokens: 1, completion_tokens: 1 })] });
    const res = await chat(gw.key, {});
    expect(res.statusCode).toBe(502);
    expect(res.json().error.code).toBe('upstream_malformed');
    expect(res.body).not.toContain('"0"');
  });
});

describe('a native evaluate channel', () => {
  const questions = { a: { type: 'boolean', instructions: 'A?' } };
  const evaluate = () => gw.app.inject({ method: 'POST', url: '/v1/evaluate', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'eval-native', state: 's', questions } });

  it('bills an upstream that reports input_tokens and output_tokens', async () => {
    native.usage = () => ({ input_tokens: 200, output_tokens: 5 }) as never;
    const res = await evaluate();
    expect(res.statusCode).toBe(200);
    expect(res.json().usage).toEqual({ inputTokens: 200, outputTokens: 5 });
    expect((await ledgerOf(res.headers['x-request-id'] as string))[0]).toMatchObject({ input_tokens: 200, output_tokens: 5, cost_micros: 220 });
  });

  it('charges 1,000 reported input tokens in full, above the reservation, and answers that cost', async () => {
    native.usage = () => ({ input_tokens: 1000, output_tokens: 2 }) as never;
    const res = await evaluate();
    expect(res.statusCode).toBe(200);
    const [row] = await ledgerOf(res.headers['x-request-id'] as string);
    // 1,000 x 1.0 + 2 x 4.0 = 1,008 micro-USD, whatever the small body reserved.
    expect(row.cost_micros).toBe(1008);
    expect(res.json().cost).toEqual({ amount: 0.001008, currency: 'USD' });
    expect(res.json().usage).toEqual({ inputTokens: 1000, outputTokens: 2 });
  });

  it('charges the reservation when the upstream reports no usage, never zero in silence', async () => {
    native.usage = () => ({}) as never;
    const res = await evaluate();
    expect(res.statusCode).toBe(200);
    const [row] = await ledgerOf(res.headers['x-request-id'] as string);
    expect(row.cost_micros).toBeGreaterThan(0);
    expect(res.json().cost.amount).toBe(row.cost_micros / 1e6);
  });
});

describe('input the gateway cannot see', () => {
  it('an Anthropic image by URL: reported usage charged in full, the answer cost equal to the charge', async () => {
    fake.next({
      kind: 'json',
      body: { id: 'msg_img', type: 'message', role: 'assistant', model: 'upstream-claude', content: [{ type: 'text', text: 'a cat' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1600, output_tokens: 10 } },
    });
    const res = await gw.app.inject({
      method: 'POST',
      url: '/v1/messages',
      headers: { 'x-api-key': gw.key },
      payload: { model: 'fake-claude', max_tokens: 10, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://images.example/cat.png' } }, { type: 'text', text: 'what?' }] }] },
    });
    expect(res.statusCode).toBe(200);
    const [row] = await ledgerOf(res.headers['x-request-id'] as string);
    // 1,600 x 3.0 + 10 x 15.0 = 4,950 micro-USD.
    expect(row.cost_micros).toBe(4950);
    expect(res.json().cost).toEqual({ amount: 0.00495, currency: 'USD' });
    expect(Number(row.overage_micros)).toBe(0);
  });
});

describe('streamed chunks', () => {
  it('carry the client model id, as the non-streaming answer does', async () => {
    const res = await chat(gw.key, { stream: true });
    const chunks = res.body.split('\n\n').filter(Boolean).map((f) => f.replace(/^data: /, '')).filter((d) => d !== '[DONE]').map((d) => JSON.parse(d));
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(chunk.model).toBe('fake-chat');
    expect(res.body).not.toContain('upstream-chat');
  });
});
