// The client libraries people point at a gateway (issue 34): the Vercel AI SDK 6 (ai 6.0.325, @ai-sdk/openai 3.0.141,
// @ai-sdk/anthropic 3.0.140) and LangChain JS (@langchain/openai 1.5.8, @langchain/anthropic 1.5.11, @langchain/core
// 1.4.0; ChatOpenAI on chat completions and, with useResponsesApi, on the Responses routes), the newest that run on
// Node 20, against a listening gateway, on pass-through and translated routes, with fakes that enforce the vendors'
// rules (test/kit/fake-claude.ts). Every answer is billed at list price.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { ChatAnthropic } from '@langchain/anthropic';
import { tool as lcTool } from '@langchain/core/tools';
import { ChatOpenAI } from '@langchain/openai';
import { generateObject, generateText, stepCountIs, streamObject, streamText, tool, type LanguageModel } from 'ai';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { FakeUpstream } from './kit/fake-upstream.js';
import { installClaude, type FakeClaude } from './kit/fake-claude.js';
import { installResponses, type ResponsesScript } from './kit/fake-responses.js';
import { adaptiveUpstream, agentPrice as price, claudeAgentModels, claudeChannel, claudeEnv } from './kit/agent-models.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';

let fake: FakeUpstream;
let claude: FakeClaude;
let gw: TestGateway;
let responses: ResponsesScript;

const chatModels = `  - id: gpt-plain
    upstream: upstream-chat
    kind: chat
    ${price}
`;
const chatOnlyModels = `  - id: vendor-chat
    upstream: upstream-chat
    kind: chat
    ${price}
`;

const city = z.object({ name: z.string(), country: z.string() });
const weatherArgs = z.object({ city: z.string() });
/** The weather answer every fake gives once the tool has answered. */
const FINAL = 'It is 21C in Paris.';

beforeAll(async () => {
  fake = await FakeUpstream.start();
  claude = installClaude(fake);
  claude.structured.add('claude-new').add(adaptiveUpstream);
  claude.adaptive.add(adaptiveUpstream);
  responses = installResponses(fake);
  responses.callArguments = '{"city":"Paris"}';
  responses.text = FINAL;
  responses.json = '{"name":"Paris","country":"France"}';
  // The OpenAI chat fakes answer by turn: a tool call while tools are offered and none has answered, else the final text
  // (or, for a json_schema format, the JSON).
  fake.route((req, _res, f) => {
    if (!req.path.endsWith('/chat/completions')) return false;
    const body = req.body ?? {};
    const answered = body.messages?.at(-1)?.role === 'tool';
    const json = body.response_format?.type === 'json_schema' || body.response_format?.type === 'json_object';
    f.chat = { text: json ? '{"name":"Paris","country":"France"}' : answered || !body.tools ? FINAL : '', usage: { prompt_tokens: 20, completion_tokens: 6 } };
    const name = body.tools?.[0]?.function.name;
    // The weather tool is asked about Paris; any other tool (LangChain's structured output) is given the city itself.
    if (!answered && body.tools && !json) f.chat.toolCalls = [{ id: `call_${f.requests.length}`, name, arguments: name === 'get_weather' ? '{"city":"Paris"}' : '{"name":"Paris","country":"France"}' }];
    return false;
  });
  gw = await startGateway({
    channels: {
      claude: claudeChannel(fake.url, claudeAgentModels),
      openai: chatChannel('openai', `${fake.url}/v1`, { models: chatModels }),
      chatonly: chatChannel('chatonly', `${fake.url}/v1`, { models: chatOnlyModels, operations: ['chat'] }),
    },
    env: claudeEnv,
    listen: true,
  });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});
beforeEach(() => {
  fake.reset();
  claude.refusals.length = 0;
  claude.turn = (req) => {
    if (req.output_config?.format) return { content: [{ type: 'text', text: '{"name":"Paris","country":"France"}' }] };
    if (req.tool_choice?.type === 'tool') return { content: [{ type: 'tool_use', id: 'toolu_j', name: req.tool_choice.name, input: { name: 'Paris', country: 'France' } }] };
    const last = req.messages.at(-1);
    const answered = Array.isArray(last.content) && last.content.some((b: { type: string }) => b.type === 'tool_result');
    if (answered || !req.tools?.length) return { content: [{ type: 'thinking', thinking: 'Answering.' }, { type: 'text', text: FINAL }] };
    return { content: [{ type: 'thinking', thinking: 'Look it up.' }, { type: 'tool_use', id: `toolu_${Date.now()}`, name: req.tools[0].name, input: { city: 'Paris' } }] };
  };
});
afterEach(async () => {
  // Nothing the fakes refused, and every answer billed at list price: 2 micro-USD an input token, 10 an output token.
  expect(claude.refusals).toEqual([]);
  const rows = await gw.services.db.selectFrom('usage_ledger').select(['input_tokens', 'output_tokens', 'cost_micros']).execute();
  for (const row of rows) expect(Number(row.cost_micros)).toBe(Number(row.input_tokens) * 2 + Number(row.output_tokens) * 10);
});

const aiOpenAI = () => createOpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1` });
const aiAnthropic = () => createAnthropic({ apiKey: gw.key, baseURL: `${gw.url}/api/v1` });

/** AI SDK models by route: the provider, the API it speaks, and what serves it. */
const aiRoutes: [string, () => LanguageModel][] = [
  ['chat pass-through', () => aiOpenAI().chat('gpt-plain')],
  ['Messages pass-through', () => aiAnthropic()('claude-thinks')],
  ['chat -> Claude', () => aiOpenAI().chat('claude-thinks')],
  ['Responses -> Claude', () => aiOpenAI().responses('claude-thinks')],
  ['Messages -> OpenAI chat', () => aiAnthropic()('gpt-plain')],
  ['Responses -> chat-only vendor', () => aiOpenAI().responses('vendor-chat')],
];

const weatherTool = tool({ description: 'Current weather', inputSchema: weatherArgs, execute: async ({ city: c }) => `21C in ${c}` });

describe.each(aiRoutes)('AI SDK, %s', (_name, model) => {
  it('generateText answers', async () => {
    const { text, usage } = await generateText({ model: model(), prompt: 'Weather in Paris?' });
    expect(text).toBe(FINAL);
    expect(usage.inputTokens).toBeGreaterThan(0);
  });

  it('streamText runs a multi-step tool loop to the final answer', async () => {
    const result = streamText({ model: model(), prompt: 'Weather in Paris?', tools: { get_weather: weatherTool }, stopWhen: stepCountIs(3) });
    let text = '';
    for await (const part of result.textStream) text += part;
    expect(text).toBe(FINAL);
    const steps = await result.steps;
    expect(steps[0].toolCalls.map((c) => c.toolName)).toEqual(['get_weather']);
    expect(steps).toHaveLength(2);
    expect((await result.totalUsage).inputTokens).toBeGreaterThan(0);
  });
});

const objectRoutes: [string, () => LanguageModel][] = [
  ['chat pass-through', () => aiOpenAI().chat('gpt-plain')],
  ['Responses pass-through', () => aiOpenAI().responses('gpt-plain')],
  ['Messages pass-through', () => aiAnthropic()('claude-structured')],
  ['chat -> Claude with structured outputs', () => aiOpenAI().chat('claude-structured')],
  ['chat -> Claude through a forced tool', () => aiOpenAI().chat('claude-thinks')],
  ['Responses -> Claude with structured outputs', () => aiOpenAI().responses('claude-structured')],
  ['Responses -> Claude through a forced tool', () => aiOpenAI().responses('claude-thinks')],
  ['Responses -> chat-only vendor', () => aiOpenAI().responses('vendor-chat')],
  ['Messages -> OpenAI chat', () => aiAnthropic()('gpt-plain')],
];

describe.each(objectRoutes)('AI SDK structured output, %s', (_name, model) => {
  it('generateObject gets schema-valid JSON', async () => {
    const { object } = await generateObject({ model: model(), schema: city, prompt: 'Capital of France?' });
    expect(object).toEqual({ name: 'Paris', country: 'France' });
  });

  it('streamObject gets it streamed', async () => {
    const result = streamObject({ model: model(), schema: city, prompt: 'Capital of France?' });
    const partials: unknown[] = [];
    for await (const partial of result.partialObjectStream) partials.push(partial);
    expect(partials.at(-1)).toEqual({ name: 'Paris', country: 'France' });
    expect(await result.object).toEqual({ name: 'Paris', country: 'France' });
  });
});

describe('AI SDK on a Responses pass-through', () => {
  it('generateText and streamText answer, billed at list price', async () => {
    const { text } = await generateText({ model: aiOpenAI().responses('gpt-plain'), prompt: 'Hello?' });
    expect(text).toBe(responses.text);
    let streamed = '';
    for await (const part of streamText({ model: aiOpenAI().responses('gpt-plain'), prompt: 'Hello?' }).textStream) streamed += part;
    expect(streamed).toBe(responses.text);
    expect(fake.requests.map((r) => r.path)).toEqual(['/v1/responses', '/v1/responses']);
  });

  it('generateText runs a multi-step tool loop: the function_call, its output sent back, the final answer', async () => {
    const { text, steps } = await generateText({ model: aiOpenAI()('gpt-plain'), prompt: 'Weather in Paris?', tools: { get_weather: weatherTool }, stopWhen: stepCountIs(3) });
    expect(text).toBe(responses.text);
    expect(steps.map((s) => s.toolCalls.map((c) => c.toolName))).toEqual([['get_weather'], []]);
    expect(steps[0].toolResults.map((r) => r.output)).toEqual(['21C in Paris']);
    expect(fake.requests.map((r) => r.path)).toEqual(['/v1/responses', '/v1/responses']);
    expect(fake.last!.body.input).toContainEqual(expect.objectContaining({ type: 'function_call_output', call_id: 'call_resp_1', output: '21C in Paris' }));
  });

  it('streamText runs a multi-step tool loop to the final answer', async () => {
    const result = streamText({ model: aiOpenAI()('gpt-plain'), prompt: 'Weather in Paris?', tools: { get_weather: weatherTool }, stopWhen: stepCountIs(3) });
    let text = '';
    for await (const part of result.textStream) text += part;
    expect(text).toBe(responses.text);
    const steps = await result.steps;
    expect(steps.map((s) => s.toolCalls.map((c) => c.toolName))).toEqual([['get_weather'], []]);
    expect(steps[0].toolCalls[0].input).toEqual({ city: 'Paris' });
    expect((await result.totalUsage).inputTokens).toBe(2 * responses.usage.input_tokens);
    expect(fake.requests.map((r) => r.body.stream)).toEqual([true, true]);
    expect(fake.last!.body.input).toContainEqual(expect.objectContaining({ type: 'function_call_output', call_id: 'call_resp_1' }));
  });
});

const PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const imagePrompt = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'What is this?' }, { type: 'image' as const, image: Buffer.from(PNG_BASE64, 'base64'), mediaType: 'image/png' }] }];

describe('AI SDK image input', () => {
  it('an image part reaches Claude as an image block', async () => {
    const { text } = await generateText({ model: aiOpenAI().chat('claude-thinks'), messages: imagePrompt });
    expect(text).toBe(FINAL);
    expect(fake.last!.body.messages[0].content[1]).toMatchObject({ type: 'image', source: { type: 'base64', media_type: 'image/png' } });
  });

  it.each([...aiRoutes, ['Responses pass-through', () => aiOpenAI().responses('gpt-plain')] as [string, () => LanguageModel]])('%s: the image reaches the upstream in its own dialect, and the answer comes back', async (_name, model) => {
    const { text } = await generateText({ model: model(), messages: imagePrompt });
    expect(text).toBe(FINAL);
    // Whatever the upstream's image part is called (image_url, image, input_image), it carries the picture's bytes.
    expect(JSON.stringify(fake.last!.body)).toContain(PNG_BASE64);
  });
});

const getWeather = lcTool(async ({ city: c }: { city: string }) => `21C in ${c}`, { name: 'get_weather', description: 'Current weather', schema: weatherArgs });
/** LangChain's ChatOpenAI on the Responses API (useResponsesApi: true). */
const lcResponses = (model: string) => new ChatOpenAI({ model, apiKey: gw.key, configuration: { baseURL: `${gw.url}/api/v1` }, maxRetries: 0, useResponsesApi: true });
const lcRoutes: [string, () => ChatOpenAI | ChatAnthropic][] = [
  ['ChatOpenAI, pass-through', () => new ChatOpenAI({ model: 'gpt-plain', apiKey: gw.key, configuration: { baseURL: `${gw.url}/api/v1` }, maxRetries: 0 })],
  ['ChatOpenAI -> Claude', () => new ChatOpenAI({ model: 'claude-structured', apiKey: gw.key, configuration: { baseURL: `${gw.url}/api/v1` }, maxRetries: 0 })],
  ['ChatOpenAI on Responses, pass-through', () => lcResponses('gpt-plain')],
  ['ChatOpenAI on Responses -> Claude with structured outputs', () => lcResponses('claude-structured')],
  ['ChatOpenAI on Responses -> Claude through a forced tool', () => lcResponses('claude-thinks')],
  ['ChatOpenAI on Responses -> chat-only vendor', () => lcResponses('vendor-chat')],
  ['ChatAnthropic, pass-through', () => new ChatAnthropic({ model: 'claude-thinks', apiKey: gw.key, anthropicApiUrl: `${gw.url}/api`, maxRetries: 0 })],
  ['ChatAnthropic -> OpenAI chat', () => new ChatAnthropic({ model: 'gpt-plain', apiKey: gw.key, anthropicApiUrl: `${gw.url}/api`, maxRetries: 0 })],
];

describe.each(lcRoutes)('LangChain %s', (_name, make) => {
  it('invoke and stream answer, with usage', async () => {
    // On the Responses API, LangChain's content is a list of blocks; text joins them on every route.
    const answer = await make().invoke('Weather in Paris?');
    expect(answer.text).toBe(FINAL);
    let text = '';
    let input = 0;
    for await (const chunk of await make().stream('Weather in Paris?')) {
      text += chunk.text;
      input += chunk.usage_metadata?.input_tokens ?? 0;
    }
    expect(text).toBe(FINAL);
    expect(input).toBeGreaterThan(0);
  });

  it('bindTools: a tool call, its result, and the final answer', async () => {
    const model = make().bindTools([getWeather]);
    const first = await model.invoke([{ role: 'user', content: 'Weather in Paris?' }]);
    expect(first.tool_calls?.map((c) => c.name)).toEqual(['get_weather']);
    const result = await getWeather.invoke(first.tool_calls![0]);
    const second = await model.invoke([{ role: 'user', content: 'Weather in Paris?' }, first, result]);
    expect(second.text).toBe(FINAL);
  });

  it('withStructuredOutput gets schema-valid JSON', async () => {
    const object = await make().withStructuredOutput(city, { name: 'city' }).invoke('Capital of France?');
    expect(object).toEqual({ name: 'Paris', country: 'France' });
  });
});

describe('LangChain ChatOpenAI with useResponsesApi', () => {
  it.each([
    ['gpt-plain', '/v1/responses'],
    ['claude-thinks', '/v1/messages'],
    ['vendor-chat', '/v1/chat/completions'],
  ])('%s: asks /v1/responses, which reaches the upstream at %s', async (model, path) => {
    const answer = await lcResponses(model).invoke('Weather in Paris?');
    expect(answer.text).toBe(FINAL);
    expect(answer.id).toMatch(/^resp_/);
    expect(fake.requests.map((r) => r.path)).toEqual([path]);
  });
});

describe('AI SDK reasoning into a Claude model that thinks adaptively', () => {
  it('streamText with a reasoning effort runs the tool loop: adaptive thinking and an effort, the thinking sent back by reference', async () => {
    const result = streamText({
      model: aiOpenAI().responses('claude-adaptive'),
      prompt: 'Weather in Paris?',
      tools: { get_weather: weatherTool },
      stopWhen: stepCountIs(3),
      // The AI SDK sends a reasoning effort only for ids it knows to reason (o-series, gpt-5), unless told.
      providerOptions: { openai: { reasoningEffort: 'low', forceReasoning: true } },
    });
    let text = '';
    for await (const part of result.textStream) text += part;
    expect(text).toBe(FINAL);
    // Each step's thinking reached the AI SDK as reasoning.
    expect((await result.steps).map((step) => step.reasoningText)).toEqual(['Look it up.', 'Answering.']);
    const bodies = fake.requests.filter((r) => r.path.endsWith('/messages')).map((r) => r.body);
    expect(bodies).toHaveLength(2);
    for (const body of bodies) expect(body).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } });
    expect(bodies[0]).not.toHaveProperty('thinking.budget_tokens');
    expect(bodies[1].messages[1].content[0]).toMatchObject({ type: 'thinking', thinking: 'Look it up.' });
  });
});
