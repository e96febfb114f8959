// Agent loops on translated routes (issue 34), with the official SDKs against a listening gateway and a fake Claude that
// enforces Anthropic's rules (test/kit/fake-claude.ts): reasoning plus tools over two turns from chat and Responses
// clients, item references to this gateway's own answers, Codex-shaped custom tools, structured output, and a Claude
// Code-shaped Messages session on an OpenAI chat channel.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { installClaude, type FakeClaude } from './kit/fake-claude.js';
import { adaptiveUpstream, claudeAgentModels, claudeChannel, claudeEnv, openaiAgentModels } from './kit/agent-models.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';

let fake: FakeUpstream;
let claude: FakeClaude;
let gw: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  claude = installClaude(fake);
  claude.structured.add('claude-new').add(adaptiveUpstream);
  claude.adaptive.add(adaptiveUpstream);
  gw = await startGateway({
    channels: {
      claude: claudeChannel(fake.url, claudeAgentModels),
      vendor: chatChannel('vendor', `${fake.url}/v1`, { models: openaiAgentModels, operations: ['chat'] }),
    },
    env: claudeEnv,
    listen: true,
  });
  openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: gw.key, baseURL: `${gw.url}/api`, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  claude.refusals.length = 0;
  // Turn one thinks and calls the weather tool; a turn with its result thinks and answers.
  claude.turn = (req) => {
    const last = req.messages.at(-1);
    const answered = Array.isArray(last.content) && last.content.some((b: { type: string }) => b.type === 'tool_result');
    return answered
      ? { content: [{ type: 'thinking', thinking: 'The tool said 21C.' }, { type: 'text', text: 'It is 21C in Paris.' }] }
      : { content: [{ type: 'thinking', thinking: 'I should look it up.' }, { type: 'tool_use', id: 'toolu_w1', name: 'get_weather', input: { city: 'Paris' } }] };
  };
});

const weather = { type: 'function' as const, name: 'get_weather', description: 'Current weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }, strict: false };
const claudeBodies = () => fake.requests.filter((r) => r.path.endsWith('/messages')).map((r) => r.body);

/** What each Claude model is sent for effort `low` (Responses) and `medium` (chat): a budget, or adaptive thinking and an effort. */
const thinkingOf = {
  'claude-thinks': { low: { thinking: { type: 'enabled', budget_tokens: 2048 } }, medium: { thinking: { type: 'enabled', budget_tokens: 8192 } } },
  'claude-adaptive': { low: { thinking: { type: 'adaptive' }, output_config: { effort: 'low' } }, medium: { thinking: { type: 'adaptive' }, output_config: { effort: 'medium' } } },
} as const;
const thinkingRuns = [false, true].flatMap((stream) => (['claude-thinks', 'claude-adaptive'] as const).map((model) => [stream, model] as const));

describe('reasoning plus tools into Claude, two turns', () => {
  it.each(thinkingRuns)('Responses (stream %s, %s): the signed thinking comes back as a reasoning item and goes back before the tool result', async (stream, model) => {
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = stream
      ? await openai.responses.stream({ model, input, tools: [weather], reasoning: { effort: 'low' }, store: false, include: ['reasoning.encrypted_content'] }).finalResponse()
      : await openai.responses.create({ model, input, tools: [weather], reasoning: { effort: 'low' }, store: false, include: ['reasoning.encrypted_content'] });
    const reasoning = first.output.find((i) => i.type === 'reasoning') as OpenAI.Responses.ResponseReasoningItem;
    expect(reasoning.summary).toEqual([{ type: 'summary_text', text: 'I should look it up.' }]);
    expect(reasoning.encrypted_content).toMatch(/^gw-thinking-1\./);
    const call = first.output.find((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    // Codex and the AI SDK (store: false) send the output back as it came, with the tool's output.
    const second = await openai.responses.create({
      model,
      input: [...input, ...(first.output as OpenAI.Responses.ResponseInputItem[]), { type: 'function_call_output', call_id: call.call_id, output: '21C' }],
      tools: [weather],
      reasoning: { effort: 'low' },
      store: false,
    });
    expect(claude.refusals).toEqual([]);
    expect(second.output_text).toBe('It is 21C in Paris.');
    const sent = claudeBodies()[1];
    expect(claudeBodies()[0]).toMatchObject(thinkingOf[model].low);
    expect(sent).toMatchObject(thinkingOf[model].low);
    expect(sent.messages[1].content[0]).toMatchObject({ type: 'thinking', thinking: 'I should look it up.' });
  });

  it('Responses with store (the AI SDK default): the next step names the items by reference, and they resolve', async () => {
    const input: OpenAI.Responses.ResponseInputItem[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await openai.responses.stream({ model: 'claude-thinks', input, tools: [weather], reasoning: { effort: 'low' } }).finalResponse();
    const call = first.output.find((i) => i.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    const references = first.output.map((i) => ({ type: 'item_reference' as const, id: i.id! }));
    const second = await openai.responses.create({
      model: 'claude-thinks',
      input: [...input, ...references, { type: 'function_call_output', call_id: call.call_id, output: '21C' }],
      tools: [weather],
      reasoning: { effort: 'low' },
    });
    expect(claude.refusals).toEqual([]);
    expect(second.output_text).toBe('It is 21C in Paris.');
    expect(claudeBodies()[1].messages[1].content.map((b: { type: string }) => b.type)).toEqual(['thinking', 'tool_use']);
  });

  it("an item_reference to another workspace's item, or to no item, is 404 before anything is sent", async () => {
    const first = await openai.responses.create({ model: 'claude-thinks', input: 'Weather in Paris?', tools: [weather] });
    const other = new OpenAI({ apiKey: await gw.newKey({ workspace: await gw.newWorkspace('other-34') }), baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
    fake.reset();
    for (const [client, id] of [
      [other, first.output[0].id!],
      [openai, 'msg_never_answered'],
    ] as const) {
      const error = await client.responses.create({ model: 'claude-thinks', input: [{ type: 'item_reference', id }] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('item_not_found');
    }
    expect(fake.requests).toEqual([]);
  });

  it.each(thinkingRuns)('chat (stream %s, %s): a turn continuing the tool loop is answered with thinking off, and the loop completes', async (stream, model) => {
    const tools: OpenAI.Chat.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: weather.parameters } }];
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = stream
      ? await openai.chat.completions.stream({ model, messages, tools, reasoning_effort: 'medium' }).finalChatCompletion()
      : await openai.chat.completions.create({ model, messages, tools, reasoning_effort: 'medium' });
    const call = first.choices[0].message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    expect(call.function).toEqual({ name: 'get_weather', arguments: '{"city":"Paris"}' });
    messages.push(first.choices[0].message as OpenAI.Chat.ChatCompletionMessageParam, { role: 'tool', tool_call_id: call.id, content: '21C' });
    const second = stream
      ? await openai.chat.completions.stream({ model, messages, tools, reasoning_effort: 'medium' }).finalChatCompletion()
      : await openai.chat.completions.create({ model, messages, tools, reasoning_effort: 'medium' });
    expect(claude.refusals).toEqual([]);
    expect(second.choices[0].message.content).toBe('It is 21C in Paris.');
    const [one, two] = claudeBodies();
    expect(one).toMatchObject(thinkingOf[model].medium);
    expect(two).not.toHaveProperty('thinking');
    // An effort bounds every kind of output, so it stays when thinking is off.
    if (model === 'claude-adaptive') expect(two.output_config).toEqual({ effort: 'medium' });
  });
});

describe('Codex-shaped Responses: a custom apply_patch tool on translated routes', () => {
  const applyPatch = { type: 'custom' as const, name: 'apply_patch', description: 'Use the `apply_patch` tool to edit files.', format: { type: 'grammar' as const, syntax: 'lark' as const, definition: 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF' } };
  const patch = '*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch';

  it.each(['claude-thinks', 'gpt-plain'])('%s: the call comes back as custom_tool_call (streamed), and its history crosses back', async (model) => {
    claude.turn = (req) => (req.messages.length > 1 ? { content: [{ type: 'text', text: 'Patched.' }] } : { content: [{ type: 'tool_use', id: 'toolu_p', name: 'apply_patch', input: { input: patch } }] });
    fake.chat = { text: '', usage: { prompt_tokens: 12, completion_tokens: 7 }, toolCalls: [{ id: 'call_p', name: 'apply_patch', arguments: JSON.stringify({ input: patch }) }] };
    const request = { model, instructions: 'You are Codex.', tools: [applyPatch], tool_choice: 'auto' as const, parallel_tool_calls: false, store: false, stream: true as const, include: ['reasoning.encrypted_content' as const], prompt_cache_key: 'session-1' };
    const input: OpenAI.Responses.ResponseInputItem[] = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Add hello.txt' }] }];
    const stream = openai.responses.stream({ ...request, input });
    const deltas: string[] = [];
    stream.on('response.custom_tool_call_input.delta', (e) => deltas.push(e.delta));
    const first = await stream.finalResponse();
    const call = first.output.find((i) => i.type === 'custom_tool_call') as OpenAI.Responses.ResponseCustomToolCall;
    expect(call).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', input: patch });
    expect(deltas.join('')).toBe(patch);
    const upstreamTool = fake.last!.body.tools[0];
    expect(JSON.stringify(upstreamTool)).toContain('lark grammar');
    fake.chat = { text: 'Patched.', usage: { prompt_tokens: 12, completion_tokens: 7 } };
    const second = await openai.responses.stream({ ...request, input: [...input, call, { type: 'custom_tool_call_output', call_id: call.call_id, output: 'Done!' }] }).finalResponse();
    expect(second.output_text).toBe('Patched.');
    expect(claude.refusals).toEqual([]);
    const history = JSON.stringify(fake.last!.body.messages);
    expect(history).toContain('Add File: hello.txt');
    expect(history).toContain('Done!');
  });
});

describe('structured output to Claude', () => {
  const city = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'], additionalProperties: false };

  it.each([
    ['claude-structured', 'output_config'],
    ['claude-thinks', 'a forced tool'],
  ])('chat response_format json_schema on %s (%s): the JSON is the message content', async (model, how) => {
    claude.turn = (req) => (req.output_config ? { content: [{ type: 'text', text: '{"name":"Paris"}' }] } : { content: [{ type: 'tool_use', id: 'toolu_j', name: req.tool_choice.name, input: { name: 'Paris' } }] });
    const answer = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Capital of France?' }], response_format: { type: 'json_schema', json_schema: { name: 'city', strict: true, schema: city } } });
    expect(claude.refusals).toEqual([]);
    expect(JSON.parse(answer.choices[0].message.content!)).toEqual({ name: 'Paris' });
    expect(answer.choices[0].finish_reason).toBe('stop');
    expect(fake.last!.body).toHaveProperty(how === 'output_config' ? 'output_config' : 'tool_choice');
  });

  it.each(['claude-structured', 'claude-thinks'])('Responses text.format json_schema on %s, streamed: output_text is the JSON', async (model) => {
    claude.turn = (req) => (req.output_config ? { content: [{ type: 'text', text: '{"name":"Paris"}' }] } : { content: [{ type: 'tool_use', id: 'toolu_j', name: req.tool_choice.name, input: { name: 'Paris' } }] });
    const final = await openai.responses.stream({ model, input: 'Capital of France?', text: { format: { type: 'json_schema', name: 'city', strict: true, schema: city } } }).finalResponse();
    expect(claude.refusals).toEqual([]);
    expect(JSON.parse(final.output_text)).toEqual({ name: 'Paris' });
  });

  it('a strict function tool is a strict tool on a model that takes structured outputs', async () => {
    await openai.chat.completions.create({ model: 'claude-structured', messages: [{ role: 'user', content: 'Weather?' }], tools: [{ type: 'function', function: { name: 'get_weather', parameters: weather.parameters, strict: true } }] });
    expect(claude.refusals).toEqual([]);
    expect(fake.last!.body.tools[0]).toMatchObject({ name: 'get_weather', strict: true });
  });
});

describe('a Claude Code-shaped session on an OpenAI chat channel', () => {
  const tools = [{ name: 'Read', description: 'Read a file', input_schema: { type: 'object' as const, properties: { file_path: { type: 'string' } }, required: ['file_path'] } }];
  const session = (model: string) => ({
    model,
    max_tokens: 32000,
    system: [{ type: 'text' as const, text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: { type: 'ephemeral' as const } }],
    tools,
    metadata: { user_id: `user_${'a'.repeat(64)}_account_${'b'.repeat(36)}_session_${'c'.repeat(36)}` },
    thinking: { type: 'enabled' as const, budget_tokens: 31999 },
    context_management: { edits: [{ type: 'clear_thinking_20251015' as const, keep: 'all' as const }] },
    betas: ['claude-code-20250219', 'interleaved-thinking-2025-05-14', 'context-management-2025-06-27'],
  });

  it.each(['gpt-plain', 'gpt-reasoner'])('%s: count_tokens, turn one, and a tool_result turn with thinking history all answer', async (model) => {
    const base = session(model);
    const counted = await anthropic.beta.messages.countTokens({ model, messages: [{ role: 'user', content: 'Read README.md' }], tools, system: base.system });
    expect(counted.input_tokens).toBeGreaterThan(0);
    fake.chat = { text: '', usage: { prompt_tokens: 30, completion_tokens: 9 }, toolCalls: [{ id: 'call_r', name: 'Read', arguments: '{"file_path":"README.md"}' }] };
    const first = await anthropic.beta.messages.stream({ ...base, messages: [{ role: 'user', content: 'Read README.md' }] }).finalMessage();
    const use = first.content.find((b) => b.type === 'tool_use')!;
    expect(first.usage.input_tokens).toBe(30);
    fake.chat = { text: 'It is a gateway.', usage: { prompt_tokens: 50, completion_tokens: 5 } };
    const second = await anthropic.beta.messages.stream({
      ...base,
      messages: [
        { role: 'user', content: 'Read README.md' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'Reading it.', signature: 'sig' }, use] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '# Relay gateway' }] },
      ],
    }).finalMessage();
    expect(second.content).toEqual([{ type: 'text', text: 'It is a gateway.' }]);
    const sent = fake.last!.body;
    expect(sent.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_r', content: '# Relay gateway' });
    expect(sent.user.length).toBeLessThanOrEqual(64);
    if (model === 'gpt-reasoner') expect(sent.reasoning_effort).toBe('high');
  });

  it('clear_tool_uses is done here: older tool results are replaced before the chat model sees them', async () => {
    const history: Anthropic.Beta.BetaMessageParam[] = [{ role: 'user', content: 'Read three files' }];
    for (const n of [1, 2, 3]) {
      history.push({ role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${n}`, name: 'Read', input: { file_path: `f${n}` } }] });
      history.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${n}`, content: `contents of f${n}` }] });
    }
    const answer = await anthropic.beta.messages.create({ model: 'gpt-plain', max_tokens: 100, tools, messages: history, context_management: { edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'tool_uses', value: 2 }, keep: { type: 'tool_uses', value: 1 } }] } });
    const results = fake.last!.body.messages.filter((m: { role: string }) => m.role === 'tool').map((m: { content: string }) => m.content);
    expect(results).toEqual(['[cleared]', '[cleared]', 'contents of f3']);
    // Reported as Anthropic does: two tool uses cleared, their results ('"contents of fN"', 16 characters) 4 tokens each.
    expect(answer.context_management).toEqual({ applied_edits: [{ type: 'clear_tool_uses_20250919', cleared_tool_uses: 2, cleared_input_tokens: 8 }] });
  });

  it('a streamed answer reports the applied edits in message_delta, where the SDK reads them; none applied is an empty list', async () => {
    const history: Anthropic.Beta.BetaMessageParam[] = [{ role: 'user', content: 'Read two files' }];
    for (const n of [1, 2]) {
      history.push({ role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${n}`, name: 'Read', input: { file_path: `f${n}` } }] });
      history.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${n}`, content: `contents of f${n}` }] });
    }
    const edit = (value: number) => ({ edits: [{ type: 'clear_tool_uses_20250919' as const, trigger: { type: 'tool_uses' as const, value }, keep: { type: 'tool_uses' as const, value: 1 }, clear_tool_inputs: true }] });
    const cleared = await anthropic.beta.messages.stream({ model: 'gpt-plain', max_tokens: 100, tools, messages: history, context_management: edit(1) }).finalMessage();
    // The result ('"contents of f1"') and the input ('{"file_path":"f1"}', 18 characters): 4 + 5 tokens.
    expect(cleared.context_management).toEqual({ applied_edits: [{ type: 'clear_tool_uses_20250919', cleared_tool_uses: 1, cleared_input_tokens: 9 }] });
    const untouched = await anthropic.beta.messages.stream({ model: 'gpt-plain', max_tokens: 100, tools, messages: history, context_management: edit(5) }).finalMessage();
    expect(untouched.context_management).toEqual({ applied_edits: [] });
    const unasked = await anthropic.beta.messages.create({ model: 'gpt-plain', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    expect(unasked.context_management ?? null).toBeNull();
  });

  it('another context_management edit is refused by name', async () => {
    const error = await anthropic.beta.messages
      .create({ model: 'gpt-plain', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], context_management: { edits: [{ type: 'compact_20260112' } as never] } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(String((error as Error).message)).toContain('compact_20260112');
  });
});

describe('usage that adds up', () => {
  it('a translated Messages stream starts with the local input count, and message_delta carries the upstream count', async () => {
    fake.chat = { text: 'Hello there.', usage: { prompt_tokens: 31, completion_tokens: 4 } };
    const stream = anthropic.messages.stream({ model: 'gpt-plain', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Say hello to everyone in the room, please.' }] });
    let started: Anthropic.Usage | undefined;
    stream.on('streamEvent', (event) => {
      if (event.type === 'message_start') started = event.message.usage;
    });
    const final = await stream.finalMessage();
    expect(started!.input_tokens).toBeGreaterThan(5);
    expect(started!.input_tokens).toBeLessThan(40);
    expect(final.usage).toMatchObject({ input_tokens: 31, output_tokens: 4 });
  });

  it('a pass-through Messages stream cut short is charged the usage of its message_start plus the output streamed, not the reservation', async () => {
    const deltas = ['Once upon', ' a time, ', 'there was'].map((text) => ({ event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } } }));
    fake.next({
      kind: 'sse',
      truncate: true,
      events: [
        { event: 'message_start', data: { type: 'message_start', message: { id: 'msg_cut', type: 'message', role: 'assistant', model: 'claude-old', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 40, output_tokens: 1 } } } },
        { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
        ...deltas,
      ],
    });
    const res = await fetch(`${gw.url}/api/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': gw.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'claude-thinks', max_tokens: 4000, stream: true, messages: [{ role: 'user', content: 'Tell me a story.' }] }),
    });
    const text = await res.text();
    expect(text).toContain('event: error');
    const [row] = await ledgerForRequest(gw.services.db, res.headers.get('x-request-id')!);
    // 40 input tokens at 2 micro-USD, and the deltas' JSON (about 90 bytes each) at 4 bytes a token at 10: far below 4000 output tokens.
    const streamed = Math.ceil(deltas.reduce((n, d) => n + JSON.stringify(d.data).length, 0) / 4);
    expect(row).toMatchObject({ input_tokens: 40, output_tokens: streamed, cost_micros: 40 * 2 + streamed * 10 });
  });
});
