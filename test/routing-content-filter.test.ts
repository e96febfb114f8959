// Content-filter failover (issue 44 item 2, `failover.on: [content_filter]`), through HTTP with the official SDKs on
// loopback fakes: a 200 answer a content filter stopped (chat finish_reason content_filter, Messages stop_reason refusal,
// Responses incomplete for content_filter) moves on to the route's next target, across protocols; the client gets the
// next target's answer, each answer is charged on one ledger row and listed in the request log. A route that does not
// list content_filter answers the filtered answer as before, and so does the last target.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { newAdminToken } from '../src/admin/auth.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';
import { adminApi, type AdminApi } from './kit/admin-api.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

let fa: FakeUpstream;
let fc: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;
let api: AdminApi;
let lastRequestId: string | undefined;
const ops = newAdminToken();

const model = (id: string, input: number, output: number) => `  - id: ${id}\n    upstream: up-${id}\n    kind: chat\n    price: { inputPerMillion: ${input}, outputPerMillion: ${output} }\n`;

const routes = `
- id: careful
  failover: { on: [connect, 5xx, content_filter] }
  targets: [{ model: alpha }, { model: claude-x }]
- id: careful-claude
  failover: { on: [content_filter] }
  targets: [{ model: claude-x }, { model: alpha }]
- id: careful-cooling
  failover: { on: [content_filter] }
  cooldown: { failures: 1, windowSeconds: 30, seconds: 600 }
  targets: [{ model: alpha }, { model: claude-x }]
- id: plain
  targets: [{ model: alpha }, { model: claude-x }]
`;

beforeAll(async () => {
  [fa, fc] = await Promise.all([FakeUpstream.start(), FakeUpstream.start()]);
  gw = await startGateway({
    channels: {
      a: `id: a\nprotocol: openai-chat\nbaseUrl: ${fa.url}/v1\nmodels:\n${model('alpha', 1, 2)}`,
      claude: `id: claude\nprotocol: anthropic-messages\nbaseUrl: ${fc.url}/v1\ncredential:\n  env: FAKE_ANTHROPIC_KEY\nmodels:\n${model('claude-x', 5, 6)}`,
    },
    files: { 'routes/main.yaml': routes },
    env: { FAKE_ANTHROPIC_KEY: 'sk-ant-upstream' },
    extraConfig: `admin:\n  tokens:\n    - id: ops\n      sha256: ${ops.sha256}\n`,
    listen: true,
  });
  api = await adminApi(gw.url, ops.token);
  const fetching: typeof fetch = async (url, init) => {
    const res = await fetch(url, init);
    lastRequestId = res.headers.get('x-request-id') ?? undefined;
    return res;
  };
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0, fetch: fetching });
  anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api`, maxRetries: 0, fetch: fetching });
  // Starting a gateway takes longer than the default hook timeout on a busy machine.
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await Promise.all([fa, fc].map((f) => f?.close()));
});
beforeEach(() => {
  for (const fake of [fa, fc]) fake.reset();
  fa.chat = { text: 'Hello from alpha.', usage: { prompt_tokens: 12, completion_tokens: 7 } };
});

const filteredChat = { id: 'chatcmpl-f', object: 'chat.completion', created: 1, model: 'up-alpha', choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'content_filter' }], usage: { prompt_tokens: 40, completion_tokens: 0, total_tokens: 40 } };
const refusal = { id: 'msg_r', type: 'message', role: 'assistant', model: 'up-claude-x', content: [], stop_reason: 'refusal', stop_sequence: null, usage: { input_tokens: 50, output_tokens: 3 } };
const filteredResponse = { id: 'resp_f', object: 'response', created_at: 1, model: 'up-alpha', status: 'incomplete', incomplete_details: { reason: 'content_filter' }, output: [], usage: { input_tokens: 30, output_tokens: 0, total_tokens: 30 } };

/** The request's ledger row and its request-log row. */
async function rowsOf(requestId: string) {
  const ledger = await vi.waitFor(async () => {
    const rows = await ledgerForRequest(gw.services.db, requestId);
    expect(rows).toHaveLength(1);
    return rows[0];
  });
  const log = await vi.waitFor(async () => {
    const page = (await api('GET', `/workspaces/${gw.workspace.id}/requests`)).body as { data: { request_id: string; attempts: { channel: string; status: number; cost: number; broken?: string }[] }[] };
    const found = page.data.find((r) => r.request_id === requestId);
    expect(found).toBeDefined();
    return found!;
  });
  return { ledger, log };
}

describe('a content filter moves a request on', () => {
  it('openai SDK: a chat answer stopped by content_filter goes on to a Claude target; both answers charged on one row, both listed', async () => {
    fa.next({ kind: 'json', body: filteredChat });
    const { data: completion, response } = await openai.chat.completions.create({ model: 'careful', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.choices[0].message.content).toBeTruthy();
    expect(response.headers.get('x-gateway-target')).toBe('claude/claude-x');
    expect(fc.requests).toHaveLength(1);
    const { ledger, log } = await rowsOf(lastRequestId!);
    expect(ledger.model).toBe('claude-x');
    expect(log.attempts.map((a) => [a.channel, a.status, a.broken])).toEqual([
      ['a', 200, 'content_filter'],
      ['claude', 200, undefined],
    ]);
    // alpha's 40 input tokens at 1 per million, and Claude's answer at its own price.
    expect(log.attempts[0].cost).toBeCloseTo(40 / 1e6, 9);
    expect(log.attempts[1].cost).toBeGreaterThan(0);
    expect(Number(ledger.cost_micros)).toBe(Math.round((log.attempts[0].cost + log.attempts[1].cost) * 1e6));
  });

  it('Anthropic SDK: a refusal goes on to an OpenAI target, translated back', async () => {
    fc.next({ kind: 'json', body: refusal });
    const message = await anthropic.messages.create({ model: 'careful-claude', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    expect(message.stop_reason).toBe('end_turn');
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'Hello from alpha.' });
    expect(fa.requests).toHaveLength(1);
  });

  it('Responses client: an answer incomplete for content_filter goes on to the next target', async () => {
    fa.next({ kind: 'json', body: filteredResponse });
    const response = await openai.responses.create({ model: 'careful', input: 'hi' });
    expect(response.status).toBe('completed');
    expect(response.output_text).toBeTruthy();
    expect(fc.requests).toHaveLength(1);
  });

  it('an upstream error whose code is content_filter (a filtered prompt, 400) moves on too', async () => {
    fa.next({ kind: 'status', status: 400, body: { error: { message: 'The prompt was filtered', type: 'invalid_request_error', code: 'content_filter', param: 'prompt' } } });
    const completion = await openai.chat.completions.create({ model: 'careful', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(fc.requests).toHaveLength(1);
  });
});

describe('a content filter judges the request, not the target', () => {
  it('a filtered answer and a filtered prompt cool nothing: the next request goes to the first target again', async () => {
    fa.next({ kind: 'json', body: filteredChat });
    fa.next({ kind: 'status', status: 400, body: { error: { message: 'The prompt was filtered', type: 'invalid_request_error', code: 'content_filter', param: 'prompt' } } });
    for (let i = 0; i < 3; i++) await openai.chat.completions.create({ model: 'careful-cooling', messages: [{ role: 'user', content: 'hi' }] });
    expect(fa.requests).toHaveLength(3);
    expect(fc.requests).toHaveLength(2);
  });
});

describe('a content filter answers the client as before', () => {
  it('on a route that does not list content_filter: the filtered answer, the next target never asked', async () => {
    fa.next({ kind: 'json', body: filteredChat });
    const completion = await openai.chat.completions.create({ model: 'plain', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0].finish_reason).toBe('content_filter');
    expect(fc.requests).toHaveLength(0);
  });

  it('at the last target: its filtered answer stands, and both answers are charged', async () => {
    fa.next({ kind: 'json', body: filteredChat });
    fc.next({ kind: 'json', body: refusal });
    const completion = await openai.chat.completions.create({ model: 'careful', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0].finish_reason).toBe('content_filter');
    const { ledger, log } = await rowsOf(lastRequestId!);
    expect(log.attempts.map((a) => a.broken)).toEqual(['content_filter', undefined]);
    // alpha's 40 input tokens at 1, Claude's 50 / 3 at 5 / 6 per million.
    expect(Number(ledger.cost_micros)).toBe(40 + 50 * 5 + 3 * 6);
  });
});
