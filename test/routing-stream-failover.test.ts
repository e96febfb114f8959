// Issue 44 item 5: stream failover after the first byte, through HTTP with the official SDKs on two loopback fakes. A
// text stream its first target cuts after 40 of 100 chunks (connection lost, an error event, no byte for streamIdleMs)
// arrives whole: the next target gets the request with the 40 chunks as a final assistant turn (a prefill, flagged
// `prefix: true` for an OpenAI-chat model that takes one; else followed by a continuation instruction) and its events are
// spliced into the same client stream. Both attempts are billed and listed in the request log; a tool call in progress,
// and a route without the flag, end the stream with an error event as before.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { newAdminToken } from '../src/admin/auth.js';
import { CONTINUE_INSTRUCTION } from '../src/engine/routing/continuation.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';
import { adminApi, type AdminApi } from './kit/admin-api.js';
import { FakeUpstream, type RecordedRequest } from './kit/fake-upstream.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

let fa: FakeUpstream;
let fb: FakeUpstream;
let fc: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;
let api: AdminApi;
const ops = newAdminToken();

const WORDS = Array.from({ length: 100 }, (_, i) => `w${i} `);
const WHOLE = WORDS.join('');
const FIRST = WORDS.slice(0, 40).join('');

const model = (id: string, input: number, output: number, extra = '') => `  - id: ${id}
    upstream: up-${id}
    kind: chat
    price: { inputPerMillion: ${input}, outputPerMillion: ${output} }
${extra}`;
const channel = (id: string, protocol: string, url: string, models: string) =>
  `id: ${id}\nprotocol: ${protocol}\nbaseUrl: ${url}\n${protocol === 'anthropic-messages' ? 'credential:\n  env: FAKE_ANTHROPIC_KEY\n' : ''}models:\n${models}`;

const routes = `
- id: resilient
  failover: { streamAfterFirstByte: true, streamIdleMs: 400 }
  targets: [{ model: alpha }, { model: beta }]
- id: resilient-claude
  failover: { streamAfterFirstByte: true, streamIdleMs: 400 }
  targets: [{ model: claude-x }, { model: alpha }]
- id: fragile
  targets: [{ model: alpha }, { model: beta }]
`;

beforeAll(async () => {
  [fa, fb, fc] = await Promise.all([FakeUpstream.start(), FakeUpstream.start(), FakeUpstream.start()]);
  gw = await startGateway({
    channels: {
      a: channel('a', 'openai-chat', `${fa.url}/v1`, model('alpha', 1, 2)),
      b: channel('b', 'openai-chat', `${fb.url}/v1`, model('beta', 3, 4, '    prefill: true\n')),
      claude: channel('claude', 'anthropic-messages', `${fc.url}/v1`, model('claude-x', 5, 6)),
    },
    files: { 'routes/main.yaml': routes },
    env: { FAKE_ANTHROPIC_KEY: 'sk-ant-upstream' },
    extraConfig: `admin:\n  tokens:\n    - id: ops\n      sha256: ${ops.sha256}\n`,
    listen: true,
  });
  api = await adminApi(gw.url, ops.token);
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api`, maxRetries: 0 });
  // Starting a gateway takes longer than the default hook timeout on a busy machine.
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await Promise.all([fa, fb, fc].map((f) => f?.close()));
});
beforeEach(() => {
  for (const fake of [fa, fb, fc]) fake.reset();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const frame = (data: unknown, event?: string) => `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
const chunk = (id: string, delta: object, finish: string | null = null) => ({ id, object: 'chat.completion.chunk', created: 1, model: 'up', choices: [{ index: 0, delta, finish_reason: finish }] });

type Ending = 'cut' | 'error-event' | 'stall';

/** An OpenAI chat stream of `words`, then its end: finished with usage, or broken as `ending` says. */
function openaiStream(words: string[], ending: Ending | { usage: object }, toolCall = false) {
  return async (_req: RecordedRequest, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(frame(chunk('chatcmpl-up', { role: 'assistant', content: '' })));
    for (const word of words) res.write(frame(chunk('chatcmpl-up', { content: word })));
    if (toolCall) res.write(frame(chunk('chatcmpl-up', { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":' } }] })));
    await new Promise((resolve) => res.write('', resolve));
    if (typeof ending === 'object') {
      res.write(frame(chunk('chatcmpl-up', {}, 'stop')));
      res.write(frame({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'up', choices: [], usage: ending.usage }));
      res.end(frame('[DONE]'));
    } else if (ending === 'cut') res.socket?.destroy();
    else if (ending === 'error-event') res.end(frame({ error: { message: 'overloaded mid-stream', type: 'server_error', code: 'overloaded' } }));
    else await sleep(3_000).then(() => res.socket?.destroy());
  };
}

/** An Anthropic Messages stream of `words` in one text block, cut after them. */
function anthropicCutStream(words: string[]) {
  return async (_req: RecordedRequest, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const message = { id: 'msg_up', type: 'message', role: 'assistant', model: 'up-claude-x', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 25, output_tokens: 1 } };
    res.write(frame({ type: 'message_start', message }, 'message_start'));
    res.write(frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'));
    for (const word of words) res.write(frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: word } }, 'content_block_delta'));
    await new Promise((resolve) => res.write('', resolve));
    res.socket?.destroy();
  };
}

/** The request's ledger row (one, whatever the attempts) and its request-log row. */
async function rowsOf(requestId: string) {
  const ledger = await vi.waitFor(async () => {
    const rows = await ledgerForRequest(gw.services.db, requestId);
    expect(rows).toHaveLength(1);
    return rows[0];
  });
  const log = await vi.waitFor(
    async () => {
      const page = (await api('GET', `/workspaces/${gw.workspace.id}/requests`)).body as { data: { request_id: string; attempts: { channel: string; status: number; cost: number; broken?: string }[]; cost: number; model: string }[] };
      const found = page.data.find((r) => r.request_id === requestId);
      expect(found).toBeDefined();
      return found!;
    },
    { timeout: 5_000, interval: 20 },
  );
  return { ledger, log };
}

describe('a text stream cut after 40 of 100 chunks arrives whole', () => {
  it.each<Ending>(['cut', 'error-event', 'stall'])('openai SDK, first target %s: finalChatCompletion() has the whole text, one id, the usage summed; billed twice on one row', async (ending) => {
    fa.next({ kind: 'handler', fn: openaiStream(WORDS.slice(0, 40), ending) });
    fb.next({ kind: 'handler', fn: openaiStream(WORDS.slice(40), { usage: { prompt_tokens: 120, completion_tokens: 60 } }) });
    const stream = openai.chat.completions.stream({ model: 'resilient', max_tokens: 500, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'count to 100' }] });
    const ids = new Set<string>();
    stream.on('chunk', (c) => ids.add(c.id));
    const final = await stream.finalChatCompletion();
    expect(final.choices[0].message.content).toBe(WHOLE);
    expect(final.choices[0].finish_reason).toBe('stop');
    expect([...ids]).toEqual(['chatcmpl-up']);
    // The continuation's 120 / 60, plus the first attempt's input (estimated) and its 40 chunks of output (estimated).
    expect(final.usage!.prompt_tokens).toBeGreaterThan(120);
    expect(final.usage!.completion_tokens).toBeGreaterThan(60);
    expect(final.usage!.total_tokens).toBe(final.usage!.prompt_tokens + final.usage!.completion_tokens);
    // beta takes a prefill: the text streamed so far is its final assistant turn, flagged prefix, without trailing space.
    const continued = fb.requests[0].body;
    expect(continued.messages).toEqual([
      { role: 'user', content: 'count to 100' },
      { role: 'assistant', content: FIRST.trimEnd(), prefix: true },
    ]);
    expect(continued.max_tokens).toBeLessThan(500);
  });

  it('request log and ledger: both attempts listed, each with its cost, the row charging their sum', async () => {
    fa.next({ kind: 'handler', fn: openaiStream(WORDS.slice(0, 40), 'cut') });
    fb.next({ kind: 'handler', fn: openaiStream(WORDS.slice(40), { usage: { prompt_tokens: 120, completion_tokens: 60 } }) });
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'resilient', stream: true, messages: [{ role: 'user', content: 'count to 100' }] }),
    });
    const text = await res.text();
    expect(text.trim().endsWith('data: [DONE]')).toBe(true);
    const { ledger, log } = await rowsOf(res.headers.get('x-request-id')!);
    expect(ledger.model).toBe('beta');
    expect(Number(ledger.overage_micros)).toBe(0);
    expect(log.attempts.map((a) => [a.channel, a.status, a.broken])).toEqual([
      ['a', 200, 'upstream_unreachable'],
      ['b', 200, undefined],
    ]);
    // beta's 120 / 60 at 3 / 4 per million, and alpha's estimate (> 0) at 1 / 2.
    expect(log.attempts[1].cost).toBeCloseTo((120 * 3 + 60 * 4) / 1e6, 9);
    expect(log.attempts[0].cost).toBeGreaterThan(0);
    expect(Number(ledger.cost_micros)).toBe(Math.round((log.attempts[0].cost + log.attempts[1].cost) * 1e6));
  });

  it('Anthropic SDK, Claude target cut, continued on an OpenAI target: finalMessage() has the whole text in one block', async () => {
    fc.next({ kind: 'handler', fn: anthropicCutStream(WORDS.slice(0, 40)) });
    fa.next({ kind: 'handler', fn: openaiStream(WORDS.slice(40), { usage: { prompt_tokens: 130, completion_tokens: 60 } }) });
    const stream = anthropic.messages.stream({ model: 'resilient-claude', max_tokens: 500, messages: [{ role: 'user', content: 'count to 100' }] });
    const final = await stream.finalMessage();
    expect(final.id).toBe('msg_up');
    expect(final.content).toHaveLength(1);
    expect(final.content[0]).toMatchObject({ type: 'text', text: WHOLE });
    expect(final.stop_reason).toBe('end_turn');
    // The first attempt's 25 input tokens (its message_start) and 40 chunks (estimated), plus the continuation's 130 / 60.
    expect(final.usage.input_tokens).toBe(155);
    expect(final.usage.output_tokens).toBeGreaterThan(60);
    // alpha takes no prefill: the streamed text, then the continuation instruction (translated to OpenAI chat).
    const messages = fa.requests[0].body.messages as { role: string; content: unknown }[];
    expect(messages.at(-2)).toEqual({ role: 'assistant', content: FIRST });
    expect(messages.at(-1)).toEqual({ role: 'user', content: CONTINUE_INSTRUCTION });
  });
});

describe('streams that are not continued end with an error event, as before', () => {
  it('a tool call in progress: the openai SDK sees the error, the next target is never asked', async () => {
    fa.next({ kind: 'handler', fn: openaiStream(WORDS.slice(0, 5), 'cut', true) });
    const stream = openai.chat.completions.stream({ model: 'resilient', messages: [{ role: 'user', content: 'look it up' }], tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } } }] });
    await expect(stream.finalChatCompletion()).rejects.toThrow();
    expect(fb.requests).toHaveLength(0);
  });

  it('a route without streamAfterFirstByte: the cut stream ends with an error event, the next target is never asked', async () => {
    fa.next({ kind: 'handler', fn: openaiStream(WORDS.slice(0, 40), 'cut') });
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'fragile', stream: true, messages: [{ role: 'user', content: 'count to 100' }] }),
    });
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(events.at(-1)).toMatch(/"error"/);
    expect(fb.requests).toHaveLength(0);
  });
});
