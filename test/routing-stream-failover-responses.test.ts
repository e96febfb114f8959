// Stream failover after the first byte for Responses clients (issue 44 item 5, `/v1/responses` streamed), through HTTP
// with the openai SDK on loopback fakes: a text stream its first target cuts after 40 of 100 deltas arrives whole as one
// coherent event sequence (one response id, sequence_number continuous, one response.completed, the message item going
// on, the usage of both attempts), each attempt billed. The first target is a Responses upstream (relayed as sent) or a
// chat upstream (translated); the next one a Responses upstream or a Claude target. A function call in progress is not
// continued, and a stream cut on a route with a cooldown counts as the target's failure.
import OpenAI from 'openai';
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { CONTINUE_INSTRUCTION } from '../src/engine/routing/continuation.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';
import { FakeUpstream, type RecordedRequest } from './kit/fake-upstream.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

let fr: FakeUpstream;
let fs: FakeUpstream;
let fchat: FakeUpstream;
let fc: FakeUpstream;
let gw: TestGateway;
let openai: OpenAI;
/** The x-request-id of the gateway's latest answer to the SDK. */
let lastRequestId: string | undefined;

const WORDS = Array.from({ length: 100 }, (_, i) => `w${i} `);
const WHOLE = WORDS.join('');
const FIRST = WORDS.slice(0, 40).join('');

const model = (id: string, input: number, output: number) => `  - id: ${id}\n    upstream: up-${id}\n    kind: chat\n    price: { inputPerMillion: ${input}, outputPerMillion: ${output} }\n`;
const channel = (id: string, protocol: string, url: string, models: string, extra = '') =>
  `id: ${id}\nprotocol: ${protocol}\nbaseUrl: ${url}\n${extra}${protocol === 'anthropic-messages' ? 'credential:\n  env: FAKE_ANTHROPIC_KEY\n' : ''}models:\n${models}`;

const routes = `
- id: resilient-responses
  failover: { streamAfterFirstByte: true, streamIdleMs: 400 }
  targets: [{ model: resp-a }, { model: resp-b }]
- id: resilient-translated
  failover: { streamAfterFirstByte: true, streamIdleMs: 400 }
  targets: [{ model: chat-only }, { model: claude-x }]
- id: guarded
  failover: { streamAfterFirstByte: true, streamIdleMs: 400 }
  guardrails: [stream-stop]
  targets: [{ model: resp-a }, { model: resp-b }]
- id: cooling-stream
  failover: { streamAfterFirstByte: true, streamIdleMs: 400 }
  cooldown: { failures: 2, windowSeconds: 30, seconds: 60 }
  targets: [{ model: resp-a }, { model: resp-b }]
`;

beforeAll(async () => {
  [fr, fs, fchat, fc] = await Promise.all([FakeUpstream.start(), FakeUpstream.start(), FakeUpstream.start(), FakeUpstream.start()]);
  gw = await startGateway({
    channels: {
      ra: channel('ra', 'openai-chat', `${fr.url}/v1`, model('resp-a', 1, 2)),
      rb: channel('rb', 'openai-chat', `${fs.url}/v1`, model('resp-b', 3, 4)),
      // Chat completions only: a Responses client is translated onto it.
      co: channel('co', 'openai-chat', `${fchat.url}/v1`, model('chat-only', 1, 2), 'operations: [chat]\n'),
      claude: channel('claude', 'anthropic-messages', `${fc.url}/v1`, model('claude-x', 5, 6)),
    },
    files: { 'routes/main.yaml': routes, 'guardrails/main.yaml': `- id: stream-stop\n  kind: pattern\n  patterns: [{ name: forbidden, regex: 'TOP-SECRET-[0-9]+' }]\n  stage: [output, stream]\n  action: block\n` },
    env: { FAKE_ANTHROPIC_KEY: 'sk-ant-upstream' },
    listen: true,
  });
  const fetching: typeof fetch = async (url, init) => {
    const res = await fetch(url, init);
    lastRequestId = res.headers.get('x-request-id') ?? undefined;
    return res;
  };
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0, fetch: fetching });
  // Starting a gateway takes longer than the default hook timeout on a busy machine.
}, 120_000);
afterAll(async () => {
  await gw?.close();
  await Promise.all([fr, fs, fchat, fc].map((f) => f?.close()));
});
beforeEach(() => {
  for (const fake of [fr, fs, fchat, fc]) fake.reset();
});

const frame = (data: unknown, event?: string) => `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
const written = (res: ServerResponse) => new Promise((resolve) => res.write('', resolve));

type Ending = 'cut' | 'error-event' | { usage: { input_tokens: number; output_tokens: number } };

/** A Responses stream (response `id`) of `words` in one message item, then its end: completed with usage, or broken. */
function responsesStream(id: string, words: string[], ending: Ending, call = false) {
  return async (_req: RecordedRequest, res: ServerResponse) => {
    let n = 0;
    const send = (type: string, data: object) => res.write(frame({ type, sequence_number: n++, ...data }, type));
    const response = (status: string, output: unknown[], usage: unknown) => ({ id, object: 'response', created_at: 1_700_000_000, model: 'up', status, output, usage });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    send('response.created', { response: response('in_progress', [], null) });
    send('response.in_progress', { response: response('in_progress', [], null) });
    const item = { id: `msg_${id}`, type: 'message', role: 'assistant' };
    send('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
    send('response.content_part.added', { output_index: 0, item_id: item.id, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    for (const word of words) send('response.output_text.delta', { output_index: 0, item_id: item.id, content_index: 0, delta: word, logprobs: [] });
    if (call) send('response.output_item.added', { output_index: 1, item: { id: 'fc_1', type: 'function_call', status: 'in_progress', call_id: 'call_1', name: 'lookup', arguments: '' } });
    await written(res);
    if (ending === 'cut') return void res.socket?.destroy();
    if (ending === 'error-event') return void res.end(frame({ type: 'error', sequence_number: n++, code: 'server_error', message: 'overloaded mid-stream', param: null }, 'error'));
    const text = words.join('');
    const part = { type: 'output_text', text, annotations: [] };
    const done = { ...item, status: 'completed', content: [part] };
    send('response.output_text.done', { output_index: 0, item_id: item.id, content_index: 0, text, logprobs: [] });
    send('response.content_part.done', { output_index: 0, item_id: item.id, content_index: 0, part });
    send('response.output_item.done', { output_index: 0, item: done });
    const { input_tokens, output_tokens } = ending.usage;
    send('response.completed', { response: response('completed', [done], { input_tokens, output_tokens, total_tokens: input_tokens + output_tokens, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } }) });
    res.end();
  };
}

/** An OpenAI chat stream of `words`, cut after them. */
function chatCutStream(words: string[]) {
  return async (_req: RecordedRequest, res: ServerResponse) => {
    const chunk = (delta: object) => ({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'up', choices: [{ index: 0, delta, finish_reason: null }] });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write(frame(chunk({ role: 'assistant', content: '' })));
    for (const word of words) res.write(frame(chunk({ content: word })));
    await written(res);
    res.socket?.destroy();
  };
}

/** An Anthropic Messages stream of `words` in one text block, ended with usage. */
function anthropicStream(words: string[], usage: { input_tokens: number; output_tokens: number }) {
  return async (_req: RecordedRequest, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const message = { id: 'msg_claude', type: 'message', role: 'assistant', model: 'up-claude-x', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: usage.input_tokens, output_tokens: 1 } };
    res.write(frame({ type: 'message_start', message }, 'message_start'));
    res.write(frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'));
    for (const word of words) res.write(frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: word } }, 'content_block_delta'));
    res.write(frame({ type: 'content_block_stop', index: 0 }, 'content_block_stop'));
    res.write(frame({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: usage.output_tokens } }, 'message_delta'));
    res.end(frame({ type: 'message_stop' }, 'message_stop'));
  };
}

/** Streams `body` with the openai SDK: every event the client saw, and the final response. */
async function streamed(body: Parameters<OpenAI['responses']['stream']>[0]) {
  const events: ResponseStreamEvent[] = [];
  const stream = openai.responses.stream(body);
  stream.on('event', (event) => events.push(event));
  const final = await stream.finalResponse();
  return { events, final, requestId: lastRequestId };
}

/** The sequence every client sees: numbers from 0 with no gap, one creation and one completion. */
function expectCoherent(events: ResponseStreamEvent[], id: string) {
  expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
  expect(events.filter((e) => e.type === 'response.created')).toHaveLength(1);
  expect(events.filter((e) => e.type === 'response.completed')).toHaveLength(1);
  expect(events.at(-1)!.type).toBe('response.completed');
  expect(events.filter((e) => e.type === 'response.output_item.added')).toHaveLength(1);
  expect(events.filter((e) => e.type === 'response.content_part.added')).toHaveLength(1);
  for (const e of events) if ('response' in e) expect(e.response.id).toBe(id);
}

const ledgerOf = (requestId: string) =>
  vi.waitFor(async () => {
    const rows = await ledgerForRequest(gw.services.db, requestId);
    expect(rows).toHaveLength(1);
    return rows[0];
  });

describe('a Responses stream cut after 40 of 100 deltas arrives whole', () => {
  it.each<'cut' | 'error-event'>(['cut', 'error-event'])('Responses target %s, continued on another Responses target: finalResponse() has the whole text, one id, numbers continuous, the usage summed', async (ending) => {
    fr.next({ kind: 'handler', fn: responsesStream('resp_first', WORDS.slice(0, 40), ending) });
    fs.next({ kind: 'handler', fn: responsesStream('resp_second', WORDS.slice(40), { usage: { input_tokens: 120, output_tokens: 60 } }) });
    const { events, final } = await streamed({ model: 'resilient-responses', input: 'count to 100', max_output_tokens: 500 });
    expect(final.output_text).toBe(WHOLE);
    expect(final.id).toBe('resp_first');
    expect(final.status).toBe('completed');
    expect(final.output).toHaveLength(1);
    expect(final.output[0]).toMatchObject({ id: 'msg_resp_first', type: 'message', status: 'completed', content: [{ type: 'output_text', text: WHOLE }] });
    expectCoherent(events, 'resp_first');
    const done = events.filter((e) => e.type === 'response.output_text.done');
    expect(done.map((e) => e.text)).toEqual([WHOLE]);
    // The continuation's 120 / 60, plus the first attempt's input (estimated) and its 40 deltas (estimated).
    expect(final.usage!.input_tokens).toBeGreaterThan(120);
    expect(final.usage!.output_tokens).toBeGreaterThan(60);
    expect(final.usage!.total_tokens).toBe(final.usage!.input_tokens + final.usage!.output_tokens);
    // The Responses API takes no prefill: the text so far as an assistant message, then the continuation instruction.
    const continued = fs.requests[0].body;
    expect(continued.input).toEqual([
      { role: 'user', content: 'count to 100' },
      { role: 'assistant', content: FIRST },
      { role: 'user', content: CONTINUE_INSTRUCTION },
    ]);
    expect(continued.max_output_tokens).toBeLessThan(500);
  });

  it('a chat target (translated) cut, continued on a Claude target as a prefill: one coherent stream, both attempts charged on one ledger row', async () => {
    fchat.next({ kind: 'handler', fn: chatCutStream(WORDS.slice(0, 40)) });
    fc.next({ kind: 'handler', fn: anthropicStream(WORDS.slice(40), { input_tokens: 130, output_tokens: 60 }) });
    const { events, final, requestId } = await streamed({ model: 'resilient-translated', input: [{ role: 'user', content: 'count to 100' }] });
    expect(final.output_text).toBe(WHOLE);
    expectCoherent(events, final.id);
    expect(final.usage!.input_tokens).toBeGreaterThan(130);
    // Claude continues a final assistant turn: the text so far without its trailing space, no instruction after it.
    const messages = fc.requests[0].body.messages as { role: string; content: unknown }[];
    expect(messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: FIRST.trimEnd() }] });
    const row = await ledgerOf(requestId!);
    expect(row.model).toBe('claude-x');
    // Claude's 130 / 60 at 5 / 6 per million, plus the chat target's estimate (more than nothing).
    expect(Number(row.cost_micros)).toBeGreaterThan(Math.round(130 * 5 + 60 * 6));
  });
});

describe('Responses streams that are not continued', () => {
  it('a function call in progress: the SDK sees the error, the next target is never asked', async () => {
    fr.next({ kind: 'handler', fn: responsesStream('resp_first', WORDS.slice(0, 5), 'cut', true) });
    await expect(streamed({ model: 'resilient-responses', input: 'look it up', tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object' }, strict: false }] })).rejects.toThrow();
    expect(fs.requests).toHaveLength(0);
  });

  it('a guardrail blocks the stream: it ends with the block, never continued on the next target', async () => {
    fr.next({ kind: 'handler', fn: responsesStream('resp_first', [...WORDS.slice(0, 20), 'TOP-SECRET-42 ', ...WORDS.slice(20, 40)], 'cut') });
    await expect(streamed({ model: 'guarded', input: 'tell me' })).rejects.toThrow(/guardrail "stream-stop"/);
    expect(fs.requests).toHaveLength(0);
  });
});

describe('a stream broken after its first byte is a failure of its target', () => {
  it('two cut streams cool the first target: the next request goes straight to the second', async () => {
    for (let i = 0; i < 2; i++) {
      fr.next({ kind: 'handler', fn: responsesStream('resp_first', WORDS.slice(0, 40), 'cut') });
      fs.next({ kind: 'handler', fn: responsesStream('resp_second', WORDS.slice(40), { usage: { input_tokens: 120, output_tokens: 60 } }) });
      expect((await streamed({ model: 'cooling-stream', input: 'count to 100' })).final.output_text).toBe(WHOLE);
    }
    fs.next({ kind: 'handler', fn: responsesStream('resp_second', WORDS, { usage: { input_tokens: 10, output_tokens: 100 } }) });
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'cooling-stream', stream: true, input: 'count to 100' }),
    });
    await res.text();
    expect(res.headers.get('x-gateway-target')).toBe('rb/resp-b');
    expect(fr.requests).toHaveLength(2);
    expect(fs.requests).toHaveLength(3);
  });
});
