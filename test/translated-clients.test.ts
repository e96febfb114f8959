// Translated routes real clients can trust (issue 22), each defect pinned with the official SDK as the client: reasoning
// models, thinking <-> reasoning_effort, refusals both ways, fields refused by name, prefill, interleaved tool chunks, one id
// scheme, and workspace file ids in image and document inputs.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { acceptedSamples, png } from './kit/media-samples.js';

let fake: FakeUpstream;
let gw: TestGateway;
let anthropic: Anthropic;
let openai: OpenAI;

const price = 'price: { inputPerMillion: 2.0, outputPerMillion: 10.0 }';
const chatModels = `  - id: plain-chat
    upstream: upstream-chat
    kind: chat
    ${price}
  - id: reasoning-chat
    upstream: upstream-reasoner
    kind: chat
    reasoning: true
    ${price}
  - id: prefill-chat
    upstream: upstream-prefill
    kind: chat
    prefill: true
    ${price}
`;
/** A vendor without the Responses API: Responses requests to its models are translated to chat. */
const chatOnlyModels = `  - id: reasoning-vendor
    upstream: upstream-reasoner
    kind: chat
    reasoning: true
    ${price}
  - id: plain-vendor
    upstream: upstream-chat
    kind: chat
    ${price}
`;
const claudeModels = `  - id: claude-thinks
    upstream: claude-upstream
    kind: chat
    thinking: true
    ${price}
  - id: claude-plain
    upstream: claude-plain-upstream
    kind: chat
    ${price}
`;

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] });
const usageChunk = (reasoning: number) =>
  JSON.stringify({ id: 'chatcmpl-up', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage: { prompt_tokens: 10, completion_tokens: 40, total_tokens: 50, completion_tokens_details: { reasoning_tokens: reasoning } } });
const chatAnswer = (message: Record<string, unknown>, finish = 'stop', reasoning = 0) => ({
  id: 'chatcmpl-up',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: finish, logprobs: null }],
  usage: { prompt_tokens: 10, completion_tokens: 40, total_tokens: 50, completion_tokens_details: { reasoning_tokens: reasoning } },
});
const anthropicEvent = (event: string, data: Record<string, unknown>) => ({ event, data: { type: event, ...data } });

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({
    channels: {
      vendor: chatChannel('vendor', `${fake.url}/v1`, { models: chatModels }),
      chatonly: chatChannel('chatonly', `${fake.url}/v1`, { models: chatOnlyModels, operations: ['chat'] }),
      claude: chatChannel('claude', `${fake.url}/v1`, { protocol: 'anthropic-messages', models: claudeModels, credentialEnv: 'FAKE_ANTHROPIC_KEY' }),
    },
    env: { FAKE_ANTHROPIC_KEY: 'sk-ant-upstream' },
    listen: true,
  });
  anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api`, maxRetries: 0 });
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  fake.chat = { text: 'Hello from the fake upstream.', usage: { prompt_tokens: 12, completion_tokens: 7 } };
});

describe('an OpenAI reasoning model behind the Anthropic SDK and Responses', () => {
  it('gets max_completion_tokens, never max_tokens, and a thinking budget as reasoning_effort', async () => {
    const message = await anthropic.messages.create({
      model: 'reasoning-chat',
      max_tokens: 20000,
      thinking: { type: 'enabled', budget_tokens: 8000 },
      messages: [{ role: 'user', content: 'Prove it.' }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from the fake upstream.' }]);
    const body = fake.last!.body;
    expect(body).toMatchObject({ model: 'upstream-reasoner', max_completion_tokens: 20000, reasoning_effort: 'medium' });
    expect(body).not.toHaveProperty('max_tokens');
    expect(body).not.toHaveProperty('thinking');
  });

  it('maps the budget bands: a small budget is low, a large one high', async () => {
    await anthropic.messages.create({ model: 'reasoning-chat', max_tokens: 64, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'hi' }] });
    expect(fake.last!.body.reasoning_effort).toBe('low');
    await anthropic.messages.create({ model: 'reasoning-chat', max_tokens: 20000, thinking: { type: 'enabled', budget_tokens: 16384 }, messages: [{ role: 'user', content: 'hi' }] });
    expect(fake.last!.body.reasoning_effort).toBe('high');
  });

  it('a model that does not reason keeps max_tokens and gets no reasoning_effort', async () => {
    await anthropic.messages.create({ model: 'plain-chat', max_tokens: 64, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: 'hi' }] });
    expect(fake.last!.body).toMatchObject({ max_tokens: 64 });
    expect(fake.last!.body).not.toHaveProperty('reasoning_effort');
    expect(fake.last!.body).not.toHaveProperty('max_completion_tokens');
  });

  it('Responses: reasoning.effort and max_output_tokens cross as reasoning_effort and max_completion_tokens, reasoning tokens reported', async () => {
    fake.next({ kind: 'json', body: chatAnswer({ content: 'Done.' }, 'stop', 30) });
    const response = await openai.responses.create({ model: 'reasoning-vendor', input: 'Think.', max_output_tokens: 500, reasoning: { effort: 'high' } });
    expect(fake.last!.body).toMatchObject({ max_completion_tokens: 500, reasoning_effort: 'high' });
    expect(fake.last!.body).not.toHaveProperty('max_tokens');
    expect(response.usage?.output_tokens_details.reasoning_tokens).toBe(30);
  });

  it('Responses, streamed: reasoning tokens are reported, not 0', async () => {
    fake.next({ kind: 'sse', events: [chunk({ role: 'assistant', content: '' }), chunk({ content: 'Done.' }), chunk({}, 'stop'), usageChunk(30), '[DONE]'] });
    const stream = openai.responses.stream({ model: 'reasoning-vendor', input: 'Think.', reasoning: { effort: 'low' } });
    const final = await stream.finalResponse();
    expect(final.usage?.output_tokens_details.reasoning_tokens).toBe(30);
    expect(fake.last!.body).toMatchObject({ reasoning_effort: 'low', max_completion_tokens: 4096 });
  });
});

describe('reasoning_effort to a Claude model that thinks', () => {
  it('becomes a thinking budget, with max_tokens raised above it', async () => {
    await openai.chat.completions.create({ model: 'claude-thinks', reasoning_effort: 'high', max_completion_tokens: 1000, messages: [{ role: 'user', content: 'hi' }] });
    expect(fake.last!.body).toMatchObject({ model: 'claude-upstream', max_tokens: 17384, thinking: { type: 'enabled', budget_tokens: 16384 } });
  });

  it('Responses reasoning.effort likewise; a model that does not think gets no thinking', async () => {
    await openai.responses.create({ model: 'claude-thinks', input: 'hi', reasoning: { effort: 'low' }, max_output_tokens: 10000 });
    expect(fake.last!.body).toMatchObject({ max_tokens: 10000, thinking: { type: 'enabled', budget_tokens: 2048 } });
    await openai.chat.completions.create({ model: 'claude-plain', reasoning_effort: 'high', messages: [{ role: 'user', content: 'hi' }] });
    expect(fake.last!.body).not.toHaveProperty('thinking');
    expect(fake.last!.body.max_tokens).toBe(4096);
  });

  it('thinking blocks in the answer are left out of the chat answer, and reasoning_tokens is reported (0: Anthropic counts thinking inside output)', async () => {
    fake.next({
      kind: 'json',
      body: { id: 'msg_up', type: 'message', role: 'assistant', model: 'x', content: [{ type: 'thinking', thinking: 'hmm', signature: 'sig' }, { type: 'text', text: '42' }], stop_reason: 'end_turn', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 9 } },
    });
    const completion = await openai.chat.completions.create({ model: 'claude-thinks', reasoning_effort: 'low', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0].message.content).toBe('42');
    expect(completion.usage?.completion_tokens_details?.reasoning_tokens).toBe(0);
  });
});

describe('refusals cross both ways', () => {
  it('a chat refusal reaches the Anthropic SDK as stop_reason refusal with its text', async () => {
    fake.next({ kind: 'json', body: chatAnswer({ refusal: "I can't help with that." }) });
    const message = await anthropic.messages.create({ model: 'plain-chat', max_tokens: 64, messages: [{ role: 'user', content: 'bad' }] });
    expect(message.stop_reason).toBe('refusal');
    expect(message.content).toEqual([{ type: 'text', text: "I can't help with that." }]);
  });

  it('a streamed delta.refusal reaches the Anthropic SDK as text and stop_reason refusal', async () => {
    fake.next({ kind: 'sse', events: [chunk({ role: 'assistant', content: '' }), chunk({ refusal: "I can't " }), chunk({ refusal: 'help.' }), chunk({}, 'stop'), usageChunk(0), '[DONE]'] });
    const message = await anthropic.messages.stream({ model: 'plain-chat', max_tokens: 64, messages: [{ role: 'user', content: 'bad' }] }).finalMessage();
    expect(message.stop_reason).toBe('refusal');
    expect(message.content).toHaveLength(1);
    expect(message.content[0]).toMatchObject({ type: 'text', text: "I can't help." });
  });

  it('a streamed chat refusal reaches a Responses client as a refusal part', async () => {
    fake.next({ kind: 'sse', events: [chunk({ role: 'assistant', content: '' }), chunk({ refusal: 'No.' }), chunk({}, 'stop'), usageChunk(0), '[DONE]'] });
    const stream = openai.responses.stream({ model: 'plain-vendor', input: 'bad' });
    const types: string[] = [];
    stream.on('event', (e) => types.push(e.type));
    const final = await stream.finalResponse();
    expect(types).toContain('response.refusal.delta');
    expect(types).toContain('response.refusal.done');
    expect(final.output[0]).toMatchObject({ type: 'message', content: [{ type: 'refusal', refusal: 'No.' }] });
  });

  it('an Anthropic refusal reaches the openai SDK as message.refusal, streamed or not', async () => {
    fake.next({
      kind: 'json',
      body: { id: 'msg_up', type: 'message', role: 'assistant', model: 'x', content: [{ type: 'text', text: 'I will not.' }], stop_reason: 'refusal', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 3 } },
    });
    const completion = await openai.chat.completions.create({ model: 'claude-plain', messages: [{ role: 'user', content: 'bad' }] });
    expect(completion.choices[0]).toMatchObject({ finish_reason: 'content_filter', message: { content: null, refusal: 'I will not.' } });

    fake.next({
      kind: 'sse',
      events: [
        anthropicEvent('message_start', { message: { id: 'msg_up', type: 'message', role: 'assistant', model: 'x', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 5, output_tokens: 0 } } }),
        anthropicEvent('message_delta', { delta: { stop_reason: 'refusal', stop_sequence: null }, usage: { output_tokens: 0 } }),
        anthropicEvent('message_stop', {}),
      ],
    });
    const streamed = await openai.chat.completions.stream({ model: 'claude-plain', messages: [{ role: 'user', content: 'bad' }] }).finalChatCompletion();
    expect(streamed.choices[0].finish_reason).toBe('content_filter');
  });

  it('an Anthropic refusal reaches a Responses client as a refusal part', async () => {
    fake.next({
      kind: 'json',
      body: { id: 'msg_up', type: 'message', role: 'assistant', model: 'x', content: [{ type: 'text', text: 'I will not.' }], stop_reason: 'refusal', stop_sequence: null, usage: { input_tokens: 5, output_tokens: 3 } },
    });
    const response = await openai.responses.create({ model: 'claude-plain', input: 'bad' });
    expect(response.output[0]).toMatchObject({ type: 'message', content: [{ type: 'refusal', refusal: 'I will not.' }] });
  });
});

describe('fields that change the answer are refused by name, never dropped', () => {
  const refusedOn = async (body: Record<string, unknown>) =>
    openai.chat.completions.create({ model: 'claude-plain', messages: [{ role: 'user', content: 'hi' }], ...body } as never).then(
      () => undefined,
      (err: unknown) => err as InstanceType<typeof OpenAI.BadRequestError>,
    );

  it.each([
    ['web_search_options', { web_search_options: { search_context_size: 'low' } }, 'web_search_options'],
    ['verbosity', { verbosity: 'low' }, 'verbosity'],
    ['a strict tool', { tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' }, strict: true } }] }, 'tools'],
    ['low image detail', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png().toString('base64')}`, detail: 'low' } }] }] }, 'messages'],
    ['a field no table lists', { chat_template_kwargs: { thinking: true } }, 'chat_template_kwargs'],
  ])('%s: 400 naming %s, and nothing sent', async (_name, body, param) => {
    const error = await refusedOn(body);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error!.param).toBe(param);
    expect(fake.requests).toHaveLength(0);
  });

  it('values that change nothing (verbosity medium, n 1, penalties 0) are accepted', async () => {
    await openai.chat.completions.create({ model: 'claude-plain', verbosity: 'medium', n: 1, frequency_penalty: 0, presence_penalty: 0, messages: [{ role: 'user', content: 'hi' }] });
    expect(fake.requests).toHaveLength(1);
  });
});

describe('an assistant prefill', () => {
  it('is sent as a prefix the model continues, where the model declares it', async () => {
    fake.chat = { text: ' 42.', usage: { prompt_tokens: 12, completion_tokens: 2 } };
    const message = await anthropic.messages.create({
      model: 'prefill-chat',
      max_tokens: 64,
      messages: [
        { role: 'user', content: 'What is the answer?' },
        { role: 'assistant', content: 'The answer is' },
      ],
    });
    expect(fake.last!.body.messages.at(-1)).toEqual({ role: 'assistant', content: 'The answer is', prefix: true });
    expect(message.content).toEqual([{ type: 'text', text: ' 42.' }]);
  });

  it('is refused with a 400 naming messages where the model would start a new message instead', async () => {
    const error = await anthropic.messages
      .create({ model: 'plain-chat', max_tokens: 64, messages: [{ role: 'user', content: 'What is the answer?' }, { role: 'assistant', content: 'The answer is' }] })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as Error).message).toContain('prefill');
    expect(fake.requests).toHaveLength(0);
  });
});

describe('an assistant prefill from a Responses client', () => {
  it('is refused naming input on a chat model that cannot continue it, and continued by Anthropic', async () => {
    const input: OpenAI.Responses.ResponseInput = [
      { role: 'user', content: 'What is the answer?' },
      { role: 'assistant', content: 'The answer is' },
    ];
    const error = await openai.responses.create({ model: 'plain-vendor', input }).then(
      () => undefined,
      (err: unknown) => err as InstanceType<typeof OpenAI.BadRequestError>,
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error!.param).toBe('input');
    expect(fake.requests).toHaveLength(0);
    await openai.responses.create({ model: 'claude-plain', input });
    expect(fake.last!.body.messages.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'The answer is' }] });
  });
});

describe('the Anthropic stream from a chat upstream', () => {
  it('never sends a block delta after its content_block_stop when tool-call chunks interleave', async () => {
    const call = (index: number, fields: Record<string, unknown>) => chunk({ tool_calls: [{ index, ...fields }] });
    fake.next({
      kind: 'sse',
      events: [
        chunk({ role: 'assistant', content: null }),
        call(0, { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }),
        call(1, { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } }),
        call(0, { function: { arguments: '{"city":' } }),
        call(1, { function: { arguments: '{"zone":' } }),
        call(0, { function: { arguments: '"Paris"}' } }),
        call(1, { function: { arguments: '"CET"}' } }),
        chunk({}, 'tool_calls'),
        usageChunk(0),
        '[DONE]',
      ],
    });
    const stream = anthropic.messages.stream({ model: 'plain-chat', max_tokens: 64, messages: [{ role: 'user', content: 'Weather and time in Paris?' }] });
    const events: Anthropic.MessageStreamEvent[] = [];
    stream.on('streamEvent', (e) => events.push(e));
    const message = await stream.finalMessage();
    const stopped = new Set<number>();
    for (const e of events) {
      if (e.type === 'content_block_stop') stopped.add(e.index);
      if (e.type === 'content_block_delta' || e.type === 'content_block_start') expect(stopped.has(e.index)).toBe(false);
    }
    const opened = events.filter((e) => e.type === 'content_block_start').map((e) => e.index);
    expect(opened).toEqual([0, 1]);
    expect(message.content).toEqual([
      { type: 'tool_use', id: 'call_a', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'call_b', name: 'get_time', input: { zone: 'CET' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
  });

  it('names the message by the same scheme streamed and not: msg_ and the request id', async () => {
    const plain = await anthropic.messages.create({ model: 'plain-chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    const streamed = anthropic.messages.stream({ model: 'plain-chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    const message = await streamed.finalMessage();
    const key = (res: Response) => res.headers.get('x-request-id')!.replace(/^req_/, '');
    expect(plain.data.id).toBe(`msg_${key(plain.response)}`);
    expect(message.id).toMatch(/^msg_(?!req_)/);
    const chat = await openai.chat.completions.create({ model: 'claude-plain', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(chat.data.id).toBe(`chatcmpl-${key(chat.response)}`);
    const chatStream = await openai.chat.completions.stream({ model: 'claude-plain', messages: [{ role: 'user', content: 'hi' }] }).finalChatCompletion();
    expect(chatStream.id).toMatch(/^chatcmpl-(?!req_)/);
  });
});

describe('workspace file ids in image and document inputs', () => {
  const pdf = acceptedSamples.find((s) => s.contentType === 'application/pdf')!.bytes;
  let image: OpenAI.FileObject;
  let document: OpenAI.FileObject;
  let foreign: OpenAI.FileObject;

  beforeAll(async () => {
    image = await openai.files.create({ file: await OpenAI.toFile(png(200), 'pic.png', { type: 'image/png' }), purpose: 'vision' });
    document = await openai.files.create({ file: await OpenAI.toFile(pdf, 'doc.pdf', { type: 'application/pdf' }), purpose: 'user_data' });
    const other = new OpenAI({ apiKey: await gw.newKey({ workspace: await gw.newWorkspace('other') }), baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
    foreign = await other.files.create({ file: await OpenAI.toFile(png(100), 'theirs.png', { type: 'image/png' }), purpose: 'vision' });
  });
  const dataUrl = (bytes: Buffer, type = 'image/png') => `data:${type};base64,${bytes.toString('base64')}`;

  it('chat: an image_url naming a file of the workspace reaches the upstream as its bytes', async () => {
    await openai.chat.completions.create({ model: 'plain-chat', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: image.id, detail: 'high' } }] }] });
    expect(fake.last!.body.messages[0].content).toEqual([{ type: 'image_url', image_url: { url: dataUrl(png(200)), detail: 'high' } }]);
  });

  it('chat: file parts naming an image and a PDF become an image part and file_data; to Anthropic, image and document blocks', async () => {
    const content: OpenAI.ChatCompletionContentPart[] = [
      { type: 'file', file: { file_id: image.id } },
      { type: 'file', file: { file_id: document.id } },
    ];
    await openai.chat.completions.create({ model: 'plain-chat', messages: [{ role: 'user', content }] });
    expect(fake.last!.body.messages[0].content).toEqual([
      { type: 'image_url', image_url: { url: dataUrl(png(200)) } },
      { type: 'file', file: { filename: 'doc.pdf', file_data: dataUrl(pdf, 'application/pdf') } },
    ]);
    await openai.chat.completions.create({ model: 'claude-plain', messages: [{ role: 'user', content }] });
    expect(fake.last!.body.messages[0].content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png(200).toString('base64') } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf.toString('base64') } },
    ]);
  });

  it("chat: another workspace's or an unknown id is 404 file_not_found, with nothing sent", async () => {
    for (const id of [foreign.id, 'file_0123456789abcdef0123456789ab']) {
      const error = await openai.chat.completions
        .create({ model: 'plain-chat', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: id } }] }] })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('file_not_found');
    }
    expect(fake.requests).toHaveLength(0);
  });

  it("chat: a vendor's own file id passes through untouched", async () => {
    await openai.chat.completions.create({ model: 'plain-chat', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-AbC123' } }] }] });
    expect(fake.last!.body.messages[0].content).toEqual([{ type: 'file', file: { file_id: 'file-AbC123' } }]);
  });

  it('chat: a PDF named in image_url is refused: it is not an image', async () => {
    const error = await openai.chat.completions.create({ model: 'plain-chat', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: document.id } }] }] }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(fake.requests).toHaveLength(0);
  });

  it('Messages: an image and a document with a file source of the workspace reach a chat upstream as their bytes', async () => {
    await anthropic.messages.create({
      model: 'plain-chat',
      max_tokens: 64,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'file', file_id: image.id } },
            { type: 'document', source: { type: 'file', file_id: document.id } },
          ],
        },
      ],
    });
    expect(fake.last!.body.messages[0].content).toEqual([
      { type: 'image_url', image_url: { url: dataUrl(png(200)) } },
      { type: 'file', file: { filename: 'document.pdf', file_data: dataUrl(pdf, 'application/pdf') } },
    ]);
  });

  it("Messages: another workspace's id is 404 not_found_error, with nothing sent", async () => {
    const error = await anthropic.messages
      .create({ model: 'plain-chat', max_tokens: 64, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: foreign.id } }] }] })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(error).toBeInstanceOf(Anthropic.NotFoundError);
    expect(fake.requests).toHaveLength(0);
  });

  it('Messages pass-through: a workspace file becomes a base64 source; an Anthropic file id passes untouched', async () => {
    await anthropic.messages.create({
      model: 'claude-plain',
      max_tokens: 64,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { type: 'file', file_id: image.id } },
            { type: 'image', source: { type: 'file', file_id: 'file_011CNha8iCJcU1wXNR6q4V8w' } },
          ],
        },
      ],
    });
    expect(fake.last!.body.messages[0].content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png(200).toString('base64') } },
      { type: 'image', source: { type: 'file', file_id: 'file_011CNha8iCJcU1wXNR6q4V8w' } },
    ]);
  });
});
