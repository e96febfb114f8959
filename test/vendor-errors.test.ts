// Issue 21: vendor headers reach the upstream on pass-through, and upstream errors keep their meaning in the client's
// dialect, as the official SDKs' own error classes. Each case failed before the fix.
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, testModels, type TestGateway } from './kit/gateway.js';

let fake: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

const claudeChannel = (id: string, baseUrl: string, model: string, extra = '') => `id: ${id}
protocol: anthropic-messages
baseUrl: ${baseUrl}
credential:
  env: FAKE_ANTHROPIC_KEY
${extra}models:
  - id: ${model}
    upstream: upstream-claude
    kind: chat
    price: { inputPerMillion: 3.0, outputPerMillion: 15.0 }
`;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({
    channels: {
      fake: chatChannel('fake', `${fake.url}/v1`, { models: testModels.fakeChat }),
      claude: claudeChannel('claude', `${fake.url}/anthropic`, 'fake-claude'),
      pinned: claudeChannel('pinned', `${fake.url}/anthropic`, 'pinned-claude', 'headers:\n  anthropic-version: "2024-10-22"\n'),
      flaky: claudeChannel('flaky', `${fake.url}/flaky`, 'flaky-claude', 'breaker: { failures: 2, coolDownMs: 60000 }\n'),
    },
    env: { FAKE_ANTHROPIC_KEY: 'sk-ant-secret-123456' },
    listen: true,
  });
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: gw.key, baseURL: gw.url, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});
beforeEach(() => fake.reset());

const hello = { max_tokens: 16, messages: [{ role: 'user' as const, content: 'hi' }] };
const messages = (model: string, headers: Record<string, string> = {}) =>
  gw.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': gw.key, ...headers }, payload: { model, ...hello } });

describe('vendor headers on pass-through', () => {
  it('forwards the client anthropic-beta and anthropic-version', async () => {
    const client = new Anthropic({ apiKey: gw.key, baseURL: gw.url, maxRetries: 0, defaultHeaders: { 'anthropic-beta': 'files-api-2025-04-14,context-1m-2025-08-07', 'anthropic-version': '2099-01-01' } });
    await client.messages.create({ model: 'fake-claude', ...hello });
    expect(fake.last!.headers['anthropic-beta']).toBe('files-api-2025-04-14,context-1m-2025-08-07');
    expect(fake.last!.headers['anthropic-version']).toBe('2099-01-01');
  });

  it('uses the channel configured anthropic-version, else the protocol one, when the client sends none', async () => {
    await messages('pinned-claude');
    expect(fake.last!.headers['anthropic-version']).toBe('2024-10-22');
    await messages('fake-claude');
    expect(fake.last!.headers['anthropic-version']).toBe('2023-06-01');
    expect(fake.last!.headers['anthropic-beta']).toBeUndefined();
  });

  it('forwards OpenAI-Beta on OpenAI pass-through, and no vendor header across a translation', async () => {
    const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0, defaultHeaders: { 'OpenAI-Beta': 'assistants=v2', 'anthropic-beta': 'x' } });
    await client.chat.completions.create({ model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(fake.last!.headers['openai-beta']).toBe('assistants=v2');
    expect(fake.last!.headers['anthropic-beta']).toBeUndefined();
    await client.chat.completions.create({ model: 'fake-claude', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
    expect(fake.last!.path).toBe('/anthropic/messages');
    expect(fake.last!.headers['anthropic-beta']).toBeUndefined();
    expect(fake.last!.headers['openai-beta']).toBeUndefined();
  });

  it('refuses a forwarded header longer than 1,024 characters, sending nothing', async () => {
    const res = await messages('fake-claude', { 'anthropic-beta': 'x'.repeat(1025) });
    expect(res.statusCode).toBe(400);
    expect(fake.requests).toHaveLength(0);
  });
});

const anthropicError = (type: string, message: string) => ({ type: 'error', error: { type, message } });
const openaiError = (code: string, message: string, type = 'invalid_request_error', param: string | null = null) => ({ error: { message, type, code, param } });

describe('upstream errors keep their meaning in each dialect', () => {
  it('529 overloaded_error: OverloadedError (529) on Messages, without an invented retry-after', async () => {
    fake.next({ kind: 'status', status: 529, body: anthropicError('overloaded_error', 'Overloaded') });
    const err = await anthropic.messages.create({ model: 'fake-claude', ...hello }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.OverloadedError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({ error: { type: 'overloaded_error' } });
    expect((err as InstanceType<typeof Anthropic.APIError>).headers?.get('retry-after')).toBeNull();
  });

  it('529 overloaded_error: 503 on an OpenAI route (InternalServerError), with the upstream retry-after', async () => {
    fake.next({ kind: 'status', status: 529, body: anthropicError('overloaded_error', 'Overloaded'), headers: { 'retry-after': '12' } });
    const err = await openai.chat.completions.create({ model: 'fake-claude', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.InternalServerError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(503);
    expect((err as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toBe('12');
  });

  it('context_length_exceeded keeps its code and param (BadRequestError), the credential scrubbed', async () => {
    fake.next({ kind: 'status', status: 400, body: openaiError('context_length_exceeded', "This model's maximum context length is 128000 tokens (key sk-ant-secret-123456)", 'invalid_request_error', 'messages') });
    const err = await openai.chat.completions.create({ model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const apiError = err as InstanceType<typeof OpenAI.APIError>;
    expect(apiError.code).toBe('context_length_exceeded');
    expect(apiError.param).toBe('messages');
    expect(apiError.message).not.toContain('sk-ant-secret-123456');
  });

  it('a 404 model_not_found stays a 404 with its code (NotFoundError)', async () => {
    fake.next({ kind: 'status', status: 404, body: openaiError('model_not_found', 'The model `upstream-chat` does not exist or you do not have access to it.') });
    const err = await openai.chat.completions.create({ model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('model_not_found');
    expect((err as Error).message).not.toContain('upstream-chat');
  });

  it('insufficient_quota is a 429 the SDK does not retry, with no invented retry-after', async () => {
    fake.next({ kind: 'status', status: 429, body: openaiError('insufficient_quota', 'You exceeded your current quota.', 'insufficient_quota') });
    const retrying = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 2 });
    const err = await retrying.chat.completions.create({ model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('insufficient_quota');
    expect((err as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toBeNull();
    expect(fake.requests).toHaveLength(1);
  });

  it('rate_limit_exceeded keeps its code and the upstream retry-after (RateLimitError)', async () => {
    fake.next({ kind: 'status', status: 429, body: openaiError('rate_limit_exceeded', 'Rate limit reached', 'requests'), headers: { 'retry-after': '5' } });
    const err = await openai.chat.completions.create({ model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).toBe('rate_limit_exceeded');
    expect((err as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toBe('5');
  });
});

describe('the circuit breaker', () => {
  it('stays closed through a run of 529s, opens on failures, and its 503 says when the next probe goes', async () => {
    for (let i = 0; i < 4; i++) fake.next({ kind: 'status', status: 529, body: anthropicError('overloaded_error', 'Overloaded') });
    for (let i = 0; i < 4; i++) expect((await messages('flaky-claude')).statusCode).toBe(529);
    fake.next({ kind: 'json', body: { id: 'msg', type: 'message', role: 'assistant', model: 'upstream-claude', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } });
    expect((await messages('flaky-claude')).statusCode).toBe(200);
    expect(fake.requests).toHaveLength(5);

    for (let i = 0; i < 2; i++) fake.next({ kind: 'status', status: 500, body: anthropicError('api_error', 'boom') });
    for (let i = 0; i < 2; i++) expect((await messages('flaky-claude')).statusCode).toBe(502);
    const err = await anthropic.messages.create({ model: 'flaky-claude', ...hello }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.ServiceUnavailableError);
    const retryAfter = Number((err as InstanceType<typeof Anthropic.APIError>).headers?.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(fake.requests).toHaveLength(7);
  });
});
