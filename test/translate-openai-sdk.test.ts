// Conformance: the official openai SDK, unchanged, against a listening gateway whose channel speaks Anthropic Messages.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';

let fake: FakeUpstream;
let gw: TestGateway;
let client: OpenAI;

const models = `  - id: claude-fake
    upstream: claude-upstream
    kind: chat
    price: { inputPerMillion: 3.0, outputPerMillion: 15.0, cachedInputPerMillion: 0.3 }
`;
const tools: OpenAI.ChatCompletionFunctionTool[] = [
  { type: 'function', function: { name: 'get_weather', description: 'Current weather for a city', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
];

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({
    channels: { anthropic: chatChannel('anthropic', `${fake.url}/v1`, { protocol: 'anthropic-messages', models, credentialEnv: 'FAKE_ANTHROPIC_KEY' }) },
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

describe('openai SDK against an anthropic-messages channel', () => {
  it('chat.completions.create is translated both ways, with the Anthropic auth and version headers upstream', async () => {
    const completion = await client.chat.completions.create({
      model: 'claude-fake',
      max_tokens: 100,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('claude-fake');
    expect(completion.choices[0]).toMatchObject({ finish_reason: 'stop', message: { role: 'assistant', content: 'Hello from the fake upstream.' } });
    expect(completion.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 });
    const upstream = fake.last!;
    expect(upstream.path).toBe('/v1/messages');
    expect(upstream.headers['x-api-key']).toBe('sk-ant-upstream');
    expect(upstream.headers['anthropic-version']).toBe('2023-06-01');
    expect(upstream.body).toEqual({ model: 'claude-upstream', max_tokens: 100, system: [{ type: 'text', text: 'Be brief.' }], messages: [{ role: 'user', content: 'hi' }] });
  });

  it('returns tool calls with their arguments as JSON text, and sends tool results back as tool_result blocks', async () => {
    fake.chat = { text: '', usage: { prompt_tokens: 30, completion_tokens: 9 }, toolCalls: [{ id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] };
    const first = await client.chat.completions.create({ model: 'claude-fake', tools, tool_choice: 'required', messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    const call = first.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(first.choices[0].message.content).toBeNull();
    expect(call).toEqual({ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
    expect(fake.last!.body.tools).toEqual([{ name: 'get_weather', description: 'Current weather for a city', input_schema: tools[0].function.parameters }]);
    expect(fake.last!.body.tool_choice).toEqual({ type: 'any' });
    expect(fake.last!.body.max_tokens).toBe(4096);

    fake.chat = { text: 'Sunny.', usage: { prompt_tokens: 40, completion_tokens: 2 } };
    const second = await client.chat.completions.create({
      model: 'claude-fake',
      tools,
      messages: [{ role: 'user', content: 'Weather in Paris?' }, first.choices[0].message, { role: 'tool', tool_call_id: 'toolu_1', content: 'sunny, 24C' }],
    });
    expect(second.choices[0].message.content).toBe('Sunny.');
    expect(fake.last!.body.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny, 24C' }] },
    ]);
  });

  it('streams text and tool-call chunks that the SDK assembles into the final completion, and bills from the events', async () => {
    fake.chat = {
      text: 'Let me check.',
      usage: { prompt_tokens: 20, completion_tokens: 15, cached_tokens: 5 },
      toolCalls: [
        { id: 'toolu_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'toolu_b', name: 'get_weather', arguments: '{"city":"Tokyo"}' },
      ],
    };
    const stream = client.chat.completions.stream({ model: 'claude-fake', tools, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Paris and Tokyo?' }] });
    const text: string[] = [];
    stream.on('content.delta', ({ delta }) => text.push(delta));
    const final = await stream.finalChatCompletion();
    expect(text.join('')).toBe('Let me check.');
    expect(final.choices[0].finish_reason).toBe('tool_calls');
    expect(final.choices[0].message.content).toBe('Let me check.');
    expect(final.choices[0].message.tool_calls!.map((c) => (c as OpenAI.ChatCompletionMessageFunctionToolCall).function)).toEqual([
      { name: 'get_weather', arguments: '{"city":"Paris"}' },
      { name: 'get_weather', arguments: '{"city":"Tokyo"}' },
    ]);
    expect(final.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 15, prompt_tokens_details: { cached_tokens: 5 } });
    expect(fake.last!.body.stream).toBe(true);
  });

  it('streams with create({stream: true}) and ends with [DONE] after the finish chunk', async () => {
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    const stream = await client.chat.completions.create({ model: 'claude-fake', stream: true, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    for await (const chunk of stream.data) chunks.push(chunk);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello from the fake upstream.');
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');
    expect(chunks.every((c) => c.usage === undefined)).toBe(true);
    // 12 input at 3.0/M + 7 output at 15.0/M = 36 + 105 micro-USD
    const ledger = await ledgerForRequest(gw.services.db, stream.response.headers.get('x-request-id')!);
    expect(ledger[0]).toMatchObject({ model: 'claude-fake', input_tokens: 12, output_tokens: 7, cost_micros: 141 });
  });

  it('refuses a field Anthropic cannot honour with a 400 naming it', async () => {
    const error = await client.chat.completions.create({ model: 'claude-fake', logprobs: true, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('logprobs');
    expect(fake.requests).toHaveLength(0);
  });
});
