// POST /v1/responses on channels that speak only chat: the official openai SDK's responses.create and responses.stream against
// a listening gateway, translated to an OpenAI-compatible chat vendor (`operations: [chat]`) and to an Anthropic channel.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { png } from './kit/media-samples.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';

let fake: FakeUpstream;
let gw: TestGateway;
let client: OpenAI;

/** 2.0 / 10.0 USD per million input / output tokens: 2 and 10 micro-USD a token. */
const vendorModels = `  - id: vendor-chat
    upstream: upstream-chat
    kind: chat
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0, cachedInputPerMillion: 0.5 }
`;
const claudeModels = `  - id: claude-fake
    upstream: claude-upstream
    kind: chat
    price: { inputPerMillion: 2.0, outputPerMillion: 10.0, cachedInputPerMillion: 0.5 }
`;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({
    channels: {
      vendor: chatChannel('vendor', `${fake.url}/v1`, { models: vendorModels, operations: ['chat'] }),
      anthropic: chatChannel('anthropic', `${fake.url}/v1`, { protocol: 'anthropic-messages', models: claudeModels, credentialEnv: 'FAKE_ANTHROPIC_KEY' }),
    },
    env: { FAKE_ANTHROPIC_KEY: 'sk-ant-upstream' },
    listen: true,
  });
  client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  fake.chat = { text: 'Hello from the fake upstream.', usage: { prompt_tokens: 12, completion_tokens: 7 } };
});

const weatherTool: OpenAI.Responses.FunctionTool = { type: 'function', name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false };
/** 12 input tokens at 2 micro-USD + 7 output at 10. */
const scriptCost = { amount: 0.000094, currency: 'USD' };
const costOf = (res: unknown) => (res as { cost?: unknown }).cost;

const channels = [
  { name: 'an OpenAI-compatible chat vendor', model: 'vendor-chat', path: '/v1/chat/completions' },
  { name: 'an Anthropic Messages channel', model: 'claude-fake', path: '/v1/messages' },
] as const;

describe.each(channels)('responses on $name', ({ model, path }) => {
  const upstreamBody = () => {
    expect(fake.requests.map((r) => r.path)).toEqual([path]);
    return fake.last!.body;
  };

  it('responses.create answers a Responses object with output_text, usage in the Responses shape and cost', async () => {
    const res = await client.responses.create({ model, input: 'Say hello', instructions: 'Be brief.', max_output_tokens: 100, metadata: { team: 'a' } });
    expect(res).toMatchObject({ object: 'response', status: 'completed', model, instructions: 'Be brief.', metadata: { team: 'a' } });
    expect(res.id).toMatch(/^resp_/);
    expect(res.output_text).toBe('Hello from the fake upstream.');
    expect(res.output).toEqual([expect.objectContaining({ type: 'message', role: 'assistant', status: 'completed', content: [expect.objectContaining({ type: 'output_text', text: 'Hello from the fake upstream.' })] })]);
    expect(res.usage).toMatchObject({ input_tokens: 12, output_tokens: 7, total_tokens: 19 });
    expect(costOf(res)).toEqual(scriptCost);
    const body = upstreamBody();
    if (path === '/v1/messages') expect(body).toEqual({ model: 'claude-upstream', max_tokens: 100, system: [{ type: 'text', text: 'Be brief.' }], messages: [{ role: 'user', content: 'Say hello' }] });
    else expect(body).toEqual({ model: 'upstream-chat', max_tokens: 100, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }] });
  });

  it('responses.stream emits the whole response.* sequence, numbered, and the SDK accumulates the final response', async () => {
    const stream = client.responses.stream({ model, input: 'Say hello' });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const types = [...new Set(events.map((e) => e.type))];
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const deltas = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta);
    expect(deltas.join('')).toBe('Hello from the fake upstream.');
    expect(events.find((e) => e.type === 'response.output_text.done')).toMatchObject({ text: 'Hello from the fake upstream.', output_index: 0, content_index: 0 });
    expect(final.output_text).toBe('Hello from the fake upstream.');
    expect(final).toMatchObject({ status: 'completed', model, usage: { input_tokens: 12, output_tokens: 7, total_tokens: 19 } });
    expect(costOf(final)).toEqual(scriptCost);
    expect(upstreamBody().stream).toBe(true);
  });

  it('round-trips a function tool: the call comes back as a function_call item, its output goes upstream as the tool result', async () => {
    fake.chat = { text: '', usage: { prompt_tokens: 20, completion_tokens: 10 }, toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] };
    const first = await client.responses.create({ model, input: 'Weather in Paris?', tools: [weatherTool], tool_choice: 'required' });
    const call = first.output.find((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call')!;
    expect(call).toMatchObject({ call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' });
    const sent = upstreamBody();
    if (path === '/v1/messages') {
      expect(sent.tools).toEqual([{ name: 'get_weather', description: 'Current weather', input_schema: weatherTool.parameters }]);
      expect(sent.tool_choice).toEqual({ type: 'any' });
    } else {
      expect(sent.tools).toEqual([{ type: 'function', function: { name: 'get_weather', description: 'Current weather', parameters: weatherTool.parameters, strict: false } }]);
      expect(sent.tool_choice).toBe('required');
    }

    fake.reset();
    fake.chat = { text: 'It is 18C in Paris.', usage: { prompt_tokens: 30, completion_tokens: 8 } };
    const second = await client.responses.create({ model, tools: [weatherTool], input: [{ role: 'user', content: 'Weather in Paris?' }, call, { type: 'function_call_output', call_id: 'call_1', output: '18C' }] });
    expect(second.output_text).toBe('It is 18C in Paris.');
    const history = upstreamBody().messages;
    if (path === '/v1/messages') {
      expect(history.slice(1)).toEqual([
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '18C' }] },
      ]);
    } else {
      expect(history.slice(1)).toEqual([
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '18C' },
      ]);
    }
  });

  it('streams a function call as arguments deltas, whole on function_call_arguments.done and in the final response', async () => {
    fake.chat = { text: '', usage: { prompt_tokens: 20, completion_tokens: 10 }, toolCalls: [{ id: 'call_9', name: 'get_weather', arguments: '{"city":"Paris, France"}' }] };
    const stream = client.responses.stream({ model, input: 'Weather in Paris?', tools: [weatherTool] });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const final = await stream.finalResponse();
    const deltas = events.filter((e) => e.type === 'response.function_call_arguments.delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((e) => e.delta).join('')).toBe('{"city":"Paris, France"}');
    expect(events.find((e) => e.type === 'response.function_call_arguments.done')).toMatchObject({ arguments: '{"city":"Paris, France"}', item_id: 'fc_call_9' });
    expect(final.output).toEqual([expect.objectContaining({ type: 'function_call', call_id: 'call_9', name: 'get_weather', arguments: '{"city":"Paris, France"}', status: 'completed' })]);
    expect(costOf(final)).toEqual({ amount: 0.00014, currency: 'USD' });
  });

  it('sends an input_image given by file_id upstream as the bytes of the workspace file', async () => {
    const bytes = png(300);
    const file = await client.files.create({ file: await OpenAI.toFile(bytes, 'ref.png', { type: 'image/png' }), purpose: 'vision' });
    await client.responses.create({ model, input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is this?' }, { type: 'input_image', file_id: file.id, detail: 'auto' }] }] });
    const content = upstreamBody().messages[0].content;
    if (path === '/v1/messages') {
      expect(content).toEqual([{ type: 'text', text: 'What is this?' }, { type: 'image', source: { type: 'base64', media_type: 'image/png', data: bytes.toString('base64') } }]);
    } else {
      expect(content).toEqual([{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${bytes.toString('base64')}`, detail: 'auto' } }]);
    }
  });

  it('writes one ledger row per translated response, at the cost on the answer', async () => {
    const res = await client.responses.create({ model, input: 'Say hello' }).withResponse();
    const requestId = res.response.headers.get('x-request-id')!;
    expect(await ledgerForRequest(gw.services.db, requestId)).toEqual([expect.objectContaining({ model, input_tokens: 12, output_tokens: 7, cost_micros: 94 })]);
  });
});

describe('what cannot cross to a chat channel is refused with 400 naming it, before any upstream call and with nothing charged', () => {
  const refusals: { name: string; body: Record<string, unknown>; param: string; says: string }[] = [
    { name: 'a web_search tool', body: { tools: [{ type: 'web_search' }] }, param: 'tools', says: 'web_search' },
    { name: 'the image_generation tool', body: { tools: [weatherTool, { type: 'image_generation' }] }, param: 'tools', says: 'image_generation' },
    { name: 'code_interpreter', body: { tools: [{ type: 'code_interpreter', container: { type: 'auto' } }] }, param: 'tools', says: 'code_interpreter' },
    { name: 'previous_response_id', body: { previous_response_id: 'resp_123' }, param: 'previous_response_id', says: 'previous_response_id' },
    { name: 'background', body: { background: true }, param: 'background', says: 'background' },
    { name: 'conversation', body: { conversation: 'conv_1' }, param: 'conversation', says: 'conversation' },
    { name: 'an http image URL', body: { input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'http://169.254.169.254/latest', detail: 'auto' }] }] }, param: 'input', says: 'https' },
  ];
  for (const model of ['vendor-chat', 'claude-fake']) {
    it.each(refusals)(`${model}: $name`, async ({ body, param, says }) => {
      const error = await client.responses.create({ model, input: 'hi', ...body } as OpenAI.Responses.ResponseCreateParamsNonStreaming).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      const bad = error as InstanceType<typeof OpenAI.BadRequestError>;
      expect(bad.param).toBe(param);
      expect(bad.message).toContain(says);
      expect(fake.requests).toHaveLength(0);
      expect(await ledgerForRequest(gw.services.db, bad.requestID!)).toEqual([]);
    });
  }
});

describe('a translated stream cut short by the upstream', () => {
  it('ends with error and response.failed, and charges the reservation once', async () => {
    const chunk = (delta: Record<string, unknown>) => JSON.stringify({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }] });
    fake.next({ kind: 'sse', truncate: true, events: [chunk({ role: 'assistant', content: '' }), chunk({ content: 'par' })] });
    const payload = JSON.stringify({ model: 'vendor-chat', input: 'Say hello', stream: true });
    const res = await fetch(`${gw.url}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' }, body: payload });
    expect(res.status).toBe(200);
    const events = (await res.text())
      .split('\n\n')
      .filter(Boolean)
      .map((frame) => JSON.parse(frame.split('\n').find((l) => l.startsWith('data: '))!.slice(6)) as { type: string; sequence_number: number; response?: Record<string, unknown> });
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.failed',
      'error',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.at(-2)!.response).toMatchObject({ status: 'failed', error: { code: 'upstream_unreachable' }, output: [{ type: 'message', status: 'incomplete', content: [{ type: 'output_text', text: 'par' }] }] });
    // No final usage: the reservation is charged, ceil(bytes / 3) input tokens at 2 micro-USD and 4096 output tokens at 10.
    const reserved = Math.ceil(Buffer.byteLength(payload) / 3) * 2 + 4096 * 10;
    expect(await ledgerForRequest(gw.services.db, res.headers.get('x-request-id')!)).toEqual([expect.objectContaining({ model: 'vendor-chat', cost_micros: reserved })]);
  });
});


describe('an Anthropic error event mid-stream', () => {
  it('reaches the SDK as response.failed, with the text sent so far, then as the error its stream raises', async () => {
    const event = (type: string, data: Record<string, unknown>) => ({ event: type, data: { type, ...data } });
    fake.next({
      kind: 'sse',
      events: [
        event('message_start', { message: { id: 'msg_x', type: 'message', role: 'assistant', content: [], model: 'claude-upstream', usage: { input_tokens: 9, output_tokens: 1 } } }),
        event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
        event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Par' } }),
        event('error', { error: { type: 'overloaded_error', message: 'Overloaded at https://internal.example/x' } }),
      ],
    });
    const stream = client.responses.stream({ model: 'claude-fake', input: 'Say hello' });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    stream.on('event', (e) => events.push(e));
    const raised = await stream.finalResponse().then(
      () => undefined,
      (err: unknown) => err as { message?: string },
    );
    expect(raised?.message).toBe('channel "anthropic" failed mid-stream (overloaded_error)');
    expect(events.map((e) => e.type).slice(-3)).toEqual(['response.output_text.delta', 'response.failed', 'error']);
    const failed = (events.at(-2) as OpenAI.Responses.ResponseFailedEvent).response;
    expect(failed.status).toBe('failed');
    expect(failed.error?.message).not.toContain('internal.example');
    expect(failed.output).toEqual([expect.objectContaining({ type: 'message', status: 'incomplete', content: [expect.objectContaining({ text: 'Par' })] })]);
  });
});
