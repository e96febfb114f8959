// Conformance: the official @anthropic-ai/sdk, unchanged, against a listening gateway whose channel speaks OpenAI chat.
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway, testModels } from './kit/gateway.js';

let fake: FakeUpstream;
let gw: TestGateway;
let client: Anthropic;

const models = testModels.fakeChat + testModels.fakeEval;
const weatherTool = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};
const pixel = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models }) }, listen: true });
  client = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api`, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  fake.chat = { text: 'Hello from the fake upstream.', usage: { prompt_tokens: 12, completion_tokens: 7 } };
});

describe('@anthropic-ai/sdk against an openai-chat channel', () => {
  it('messages.create answers a plain message with usage and the client model', async () => {
    const message = await client.messages.create({ model: 'fake-chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: 'fake-chat', stop_reason: 'end_turn', stop_sequence: null });
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from the fake upstream.' }]);
    expect(message.usage).toMatchObject({ input_tokens: 12, output_tokens: 7 });
    expect(fake.last!.body).toMatchObject({ model: 'upstream-chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
  });

  it('sends the system prompt as the first chat message', async () => {
    await client.messages.create({ model: 'fake-chat', max_tokens: 64, system: 'You are terse.', messages: [{ role: 'user', content: 'hi' }] });
    expect(fake.last!.body.messages).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'hi' },
    ]);
  });

  it('sends a base64 image as a data URL image part', async () => {
    await client.messages.create({
      model: 'fake-chat',
      max_tokens: 64,
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: pixel } }, { type: 'text', text: 'What is this?' }] }],
    });
    expect(fake.last!.body.messages[0].content).toEqual([
      { type: 'image_url', image_url: { url: `data:image/png;base64,${pixel}` } },
      { type: 'text', text: 'What is this?' },
    ]);
  });

  it('completes a tool-use round trip: tool_use out, tool_result back in', async () => {
    fake.chat = { text: '', usage: { prompt_tokens: 30, completion_tokens: 9 }, toolCalls: [{ id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] };
    const first = await client.messages.create({ model: 'fake-chat', max_tokens: 64, tools: [weatherTool], tool_choice: { type: 'auto' }, messages: [{ role: 'user', content: 'Weather in Paris?' }] });
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }]);
    expect(fake.last!.body.tools).toEqual([{ type: 'function', function: { name: 'get_weather', description: 'Current weather for a city', parameters: weatherTool.input_schema } }]);
    expect(fake.last!.body.tool_choice).toBe('auto');

    fake.chat = { text: 'It is sunny in Paris.', usage: { prompt_tokens: 40, completion_tokens: 6 } };
    const second = await client.messages.create({
      model: 'fake-chat',
      max_tokens: 64,
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'sunny, 24C' }] },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'It is sunny in Paris.' }]);
    expect(fake.last!.body.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny, 24C' },
    ]);
  });

  it('messages.stream() yields text deltas and a correct finalMessage()', async () => {
    const stream = client.messages.stream({ model: 'fake-chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    const deltas: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    const message = await stream.finalMessage();
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('Hello from the fake upstream.');
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from the fake upstream.' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.output_tokens).toBe(7);
    expect(message.usage.input_tokens).toBe(12);
    expect(fake.last!.body.stream_options).toEqual({ include_usage: true });
  });

  it('messages.stream() yields input_json deltas for parallel tool calls, in order', async () => {
    fake.chat = {
      text: 'Checking both.',
      usage: { prompt_tokens: 20, completion_tokens: 15 },
      toolCalls: [
        { id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: 'call_b', name: 'get_weather', arguments: '{"city":"Tokyo, Japan"}' },
      ],
    };
    const stream = client.messages.stream({ model: 'fake-chat', max_tokens: 64, tools: [weatherTool], messages: [{ role: 'user', content: 'Paris and Tokyo?' }] });
    const partials: string[] = [];
    stream.on('inputJson', (partial) => partials.push(partial));
    const message = await stream.finalMessage();
    expect(partials.length).toBeGreaterThan(2);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'text', text: 'Checking both.' },
      { type: 'tool_use', id: 'call_a', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'call_b', name: 'get_weather', input: { city: 'Tokyo, Japan' } },
    ]);
  });

  it('raises AuthenticationError for an unknown key', async () => {
    const stranger = new Anthropic({ apiKey: 'sk-not-a-key', baseURL: gw.url, maxRetries: 0 });
    await expect(stranger.messages.create({ model: 'fake-chat', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] })).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it('raises PermissionDeniedError for a key without llm.chat', async () => {
    const limited = new Anthropic({ apiKey: await gw.newKey({ scopes: ['files.write'] }), baseURL: gw.url, maxRetries: 0 });
    const error = await limited.messages.create({ model: 'fake-chat', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((error as InstanceType<typeof Anthropic.PermissionDeniedError>).error).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
  });

  it('raises BadRequestError for an invalid body and for an evaluation model', async () => {
    const invalid = await client.messages.create({ model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] } as unknown as Anthropic.MessageCreateParamsNonStreaming).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(Anthropic.BadRequestError);
    expect((invalid as Error).message).toContain('max_tokens');
    const evaluation = await client.messages.create({ model: 'fake-eval', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
    expect(evaluation).toBeInstanceOf(Anthropic.BadRequestError);
    expect((evaluation as Error).message).toContain('/api/v1/evaluate');
    expect(fake.requests).toHaveLength(0);
  });
});
