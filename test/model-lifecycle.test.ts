// Model ids as vendors use them: aliases resolve everywhere a model id is read, an unknown model is 404 in each dialect,
// and a model's lifecycle (deprecatedAt, retiresAt, replacement) is told to clients and acted on at its day.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { newAdminToken } from '../src/admin/auth.js';
import { adminApi, type AdminApi } from './kit/admin-api.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';

const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);
/** The tests' clock: before old-chat's retirement unless a test moves it. */
let now = day('2026-11-26');

const openaiModels = `  - id: fake-chat
    upstream: upstream-chat
    aliases: [fake-chat-2026-01-01, fake-chat-latest]
    kind: chat
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0 }
  - id: old-chat
    upstream: upstream-old
    kind: chat
    deprecatedAt: 2026-09-29
    retiresAt: 2026-11-30
    replacement: fake-chat-latest
    price: { inputPerMillion: 4.0, outputPerMillion: 20.0 }
  - id: lone-chat
    upstream: upstream-lone
    kind: chat
    retiresAt: 2026-11-30
    price: { inputPerMillion: 4.0, outputPerMillion: 20.0 }
`;
const anthropicModels = `  - id: claude-fake
    upstream: claude-upstream
    aliases: [claude-fake-20250929]
    kind: chat
    price: { inputPerMillion: 3.0, outputPerMillion: 15.0 }
`;

let fake: FakeUpstream;
let refusing: TestGateway;
let replacing: TestGateway;
let api: AdminApi;
const ops = newAdminToken();

/** shared-chat, a fallback group: the first channel's entry retires, the second's does not. */
const shared = (id: string, priority: number, more: string) =>
  `id: ${id}\nprotocol: openai-chat\nbaseUrl: ${fake.url}/v1\npriority: ${priority}\nmodels:\n  - id: shared-chat\n    upstream: ${id}-upstream\n    kind: chat\n    fallback: true\n${more}    price: { inputPerMillion: 1.0 }\n`;

const channels = () => ({
  first: shared('first', 0, '    retiresAt: 2026-11-30\n'),
  second: shared('second', 10, ''),
  fake: chatChannel('fake', `${fake.url}/v1`, { models: openaiModels }),
  anthropic: chatChannel('anthropic', `${fake.url}/v1`, { protocol: 'anthropic-messages', models: anthropicModels }),
});

beforeAll(async () => {
  fake = await FakeUpstream.start();
  refusing = await startGateway({ channels: channels(), extraConfig: `admin:\n  tokens:\n    - id: ops\n      sha256: ${ops.sha256}\n`, listen: true, overrides: { now: () => now } });
  api = await adminApi(refusing.url, ops.token);
  replacing = await startGateway({ channels: channels(), extraConfig: '  retiredModels: replace\n', overrides: { now: () => now } });
});
afterAll(async () => {
  await refusing.close();
  await replacing.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  fake.chat = { text: 'Hello.', usage: { prompt_tokens: 12, completion_tokens: 7 } };
  now = day('2026-11-26');
});

const chat = (gw: TestGateway, model: string, more: object = {}) =>
  gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}` }, payload: { model, messages: [{ role: 'user', content: 'hi' }], ...more } });
const messages = (gw: TestGateway, model: string) =>
  gw.app.inject({ method: 'POST', url: '/v1/messages', headers: { 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' }, payload: { model, max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] } });

describe('aliases', () => {
  it('routes a dated or -latest alias to its model: the upstream gets the model, the answer echoes the alias, the ledger records the id', async () => {
    for (const alias of ['fake-chat-2026-01-01', 'fake-chat-latest']) {
      const res = await chat(refusing, alias);
      expect(res.statusCode).toBe(200);
      expect(fake.last!.body.model).toBe('upstream-chat');
      expect(res.json().model).toBe(alias);
      const [row] = await ledgerForRequest(refusing.services.db, res.headers['x-request-id'] as string);
      expect(row).toMatchObject({ model: 'fake-chat', input_tokens: 12, output_tokens: 7 });
    }
  });

  it('routes an alias on the Messages route, and on count_tokens', async () => {
    const res = await messages(refusing, 'claude-fake-20250929');
    expect(res.statusCode).toBe(200);
    expect(fake.last!.body.model).toBe('claude-upstream');
    const count = await refusing.app.inject({ method: 'POST', url: '/v1/messages/count_tokens', headers: { 'x-api-key': refusing.key }, payload: { model: 'fake-chat-latest', messages: [{ role: 'user', content: 'hi' }] } });
    expect(count.statusCode).toBe(200);
    expect(count.json().input_tokens).toBeGreaterThan(0);
  });

  it('lists each model once in GET /v1/models, with its aliases and lifecycle', async () => {
    const res = await refusing.app.inject({ method: 'GET', url: '/v1/models', headers: { authorization: `Bearer ${refusing.key}` } });
    const data = res.json().data as Record<string, unknown>[];
    expect(data.map((m) => m.id).sort()).toEqual(['claude-fake', 'fake-chat', 'lone-chat', 'old-chat', 'shared-chat']);
    const entry = (list: Record<string, unknown>[], id: string) => list.find((m) => m.id === id);
    expect(entry(data, 'fake-chat')).toMatchObject({ aliases: ['fake-chat-2026-01-01', 'fake-chat-latest'] });
    expect(entry(data, 'fake-chat')).not.toHaveProperty('deprecated_at');
    expect(entry(data, 'old-chat')).toMatchObject({ deprecated_at: '2026-09-29', retires_at: '2026-11-30', replacement: 'fake-chat-latest', retired: false });
    now = day('2026-11-30');
    const later = await refusing.app.inject({ method: 'GET', url: '/v1/models', headers: { authorization: `Bearer ${refusing.key}` } });
    expect(entry(later.json().data, 'old-chat')).toMatchObject({ retired: true });
  });

  it('takes a per-model cap under an alias and keeps it under the model id, where the ledger counts it', async () => {
    const key = (await api('POST', `/workspaces/${refusing.workspace.id}/keys`, { body: {} })).body;
    const cap = await api('PUT', `/keys/${key.id}/model_caps`, { body: { model: 'fake-chat-latest', spend_cap: 1 } });
    expect(cap.status).toBe(200);
    expect(cap.body).toMatchObject({ model: 'fake-chat' });
  });
});

describe('an unknown model', () => {
  it('is a 404 model_not_found on OpenAI routes (the SDK raises NotFoundError)', async () => {
    const res = await chat(refusing, 'no-such-model');
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toMatchObject({ code: 'model_not_found', param: 'model' });
    const responses = await refusing.app.inject({ method: 'POST', url: '/v1/responses', headers: { authorization: `Bearer ${refusing.key}` }, payload: { model: 'no-such-model', input: 'hi' } });
    expect(responses.statusCode).toBe(404);
    expect(responses.json().error.code).toBe('model_not_found');
    const openai = new OpenAI({ apiKey: refusing.key, baseURL: `${refusing.url}/v1`, maxRetries: 0 });
    await expect(openai.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(fake.requests).toHaveLength(0);
  });

  it('is a 404 not_found_error on Messages routes (the SDK raises NotFoundError)', async () => {
    const res = await messages(refusing, 'claude-nope-20991231');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    expect(res.json().error.message).toContain('claude-nope-20991231');
    const anthropic = new Anthropic({ apiKey: refusing.key, baseURL: refusing.url, maxRetries: 0 });
    await expect(anthropic.messages.create({ model: 'claude-nope-20991231', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    expect(fake.requests).toHaveLength(0);
  });
});

describe('a deprecated model', () => {
  it('answers with deprecation (RFC 9745) and sunset (RFC 8594) headers, streamed or not', async () => {
    const res = await chat(refusing, 'old-chat');
    expect(res.statusCode).toBe(200);
    expect(res.headers.deprecation).toBe(`@${day('2026-09-29') / 1000}`);
    expect(res.headers.sunset).toBe('Mon, 30 Nov 2026 00:00:00 GMT');
    const streamed = await chat(refusing, 'old-chat', { stream: true });
    expect(streamed.headers['content-type']).toContain('text/event-stream');
    expect(streamed.headers.deprecation).toBe(`@${day('2026-09-29') / 1000}`);
    expect((await chat(refusing, 'fake-chat')).headers).not.toHaveProperty('deprecation');
  });
});

describe('a retired model', () => {
  it('is refused with a 404 naming its replacement (and its sunset header), from its retirement day, with nothing sent upstream', async () => {
    now = day('2026-11-30');
    const res = await chat(refusing, 'old-chat');
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toMatchObject({ code: 'model_not_found' });
    expect(res.json().error.message).toBe('model "old-chat" was retired on 2026-11-30; use "fake-chat-latest" instead');
    expect(res.headers.sunset).toBe('Mon, 30 Nov 2026 00:00:00 GMT');
    expect(fake.requests).toHaveLength(0);
  });

  it('is served by its replacement when the operator says replace, recorded and priced as the replacement', async () => {
    now = day('2026-12-01');
    const res = await chat(replacing, 'old-chat');
    expect(res.statusCode).toBe(200);
    expect(fake.last!.body.model).toBe('upstream-chat');
    expect(res.headers.sunset).toBe('Mon, 30 Nov 2026 00:00:00 GMT');
    const [row] = await ledgerForRequest(replacing.services.db, res.headers['x-request-id'] as string);
    expect(row).toMatchObject({ model: 'fake-chat', cost_micros: 12 * 2 + 7 * 10 });
  });

  it('in a fallback group, skips only the entries past their own day', async () => {
    expect((await chat(refusing, 'shared-chat')).statusCode).toBe(200);
    expect(fake.last!.body.model).toBe('first-upstream');
    now = day('2026-11-30');
    expect((await chat(refusing, 'shared-chat')).statusCode).toBe(200);
    expect(fake.last!.body.model).toBe('second-upstream');
  });

  it('without a replacement is refused whatever the operator says', async () => {
    now = day('2026-11-30');
    const res = await chat(replacing, 'lone-chat');
    expect(res.statusCode).toBe(404);
    expect(res.json().error.message).toBe('model "lone-chat" was retired on 2026-11-30');
  });
});
