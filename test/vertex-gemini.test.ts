// The shipped channels/vertex-gemini.yaml (protocol gemini-generate-content) through the official openai SDK (chat and
// Responses, streamed and not) and the Anthropic SDK (Messages), against a fake of Vertex AI's native Gemini API on
// 127.0.0.1 written from Google's reference:
// https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/projects.locations.publishers.models/generateContent
// and .../streamGenerateContent (POST .../publishers/google/models/{model}:generateContent, or
// :streamGenerateContent?alt=sse: server-sent events, each a whole GenerateContentResponse whose usageMetadata holds the
// totals so far), shapes at https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference. The fake
// refuses every request without an unexpired access token from a fake Google token endpoint (which verifies the service
// account's RS256 assertion with the public key of a key pair made here), and a body with members the API does not take.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ledgerForRequest } from '../src/store/usage-ledger.js';
import { bearerGate, googleTokenEndpoint, newServiceAccount, testClock, type FakeTokenEndpoint } from './kit/fake-cloud-auth.js';
import { FakeUpstream, json, writeSse, type RecordedRequest } from './kit/fake-upstream.js';
import { repoRoot, startGateway, type TestGateway } from './kit/gateway.js';

const shipped = readFileSync(join(repoRoot, 'channels', 'vertex-gemini.yaml'), 'utf8');
const PREFIX = '/v1/projects/test-project/locations/global/publishers/google/models/';
const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const clock = testClock();
const account = newServiceAccount();

type Body = { contents?: { role: string; parts: Record<string, unknown>[] }[]; tools?: unknown[]; [key: string]: unknown };
interface VertexCall {
  model: string;
  method: string;
  body: Body;
}

/** The members a GenerateContentRequest has (the reference's request body); anything else is Vertex's INVALID_ARGUMENT. */
const REQUEST_MEMBERS = new Set(['contents', 'systemInstruction', 'cachedContent', 'tools', 'toolConfig', 'labels', 'safetySettings', 'generationConfig', 'modelArmorConfig']);
/** The data members of a Part: exactly one per part (thought and thoughtSignature may go beside it). */
const PART_DATA = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'];

// What the fake answers: a call of the first declared function until a functionResponse comes back, else text. Usage is
// 12 prompt tokens, 5 candidate and 2 thinking tokens; a stream's chunks carry the totals so far, so their sum
// (24 prompt, 7 candidate) is not the bill.
const SIGNATURE = 'c2lnbmF0dXJl';
const USAGE = { promptTokenCount: 12, candidatesTokenCount: 5, thoughtsTokenCount: 2, totalTokenCount: 19 };
function answer(body: Body, parts: Record<string, unknown>[], usage: Record<string, number>, finishReason?: string) {
  return { candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}) }], usageMetadata: usage, modelVersion: 'gemini-3.5-flash', createTime: '2026-11-26T12:00:00Z', responseId: 'vertex-resp-1' };
}

async function vertexGemini(call: VertexCall, res: ServerResponse) {
  const invalid = (message: string) => json(res, 400, { error: { code: 400, message, status: 'INVALID_ARGUMENT' } });
  const unknown = Object.keys(call.body).find((key) => !REQUEST_MEMBERS.has(key));
  if (unknown) return invalid(`Invalid JSON payload received. Unknown name "${unknown}": Cannot find field.`);
  if (!Array.isArray(call.body.contents) || call.body.contents.length === 0) return invalid('contents is not specified');
  for (const content of call.body.contents) {
    if (content.role !== 'user' && content.role !== 'model') return invalid(`Please use a valid role: user, model.`);
    for (const part of content.parts ?? []) if (PART_DATA.filter((k) => k in part).length !== 1) return invalid('A part must have exactly one data field.');
  }
  // Gemini 3 models check thought signatures (https://cloud.google.com/vertex-ai/generative-ai/docs/thought-signatures):
  // the first functionCall of each model content since the last user text must come back with the signature it was given.
  const lastText = call.body.contents.map((c) => c.role === 'user' && c.parts.some((p) => 'text' in p)).lastIndexOf(true);
  for (const [n, content] of call.body.contents.entries()) {
    const first = content.role === 'model' ? content.parts.find((p) => 'functionCall' in p) : undefined;
    if (n > lastText && first && first.thoughtSignature !== SIGNATURE) return invalid(`Unable to submit request because function call \`${(first.functionCall as { name: string }).name}\` in the ${n + 1}. content block is missing a \`thought_signature\`.`);
    // A turn's function responses come back together, one for each of its calls.
    const callCount = content.role === 'model' ? content.parts.filter((p) => 'functionCall' in p).length : 0;
    const responses = call.body.contents[n + 1]?.parts.filter((p) => 'functionResponse' in p).length ?? 0;
    if (callCount > 0 && responses > 0 && responses !== callCount) return invalid('Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.');
  }
  // Every declared function is called at once (parallel calls); the first call carries the turn's signature.
  const declared = ((call.body.tools as { functionDeclarations?: { name: string }[] }[] | undefined)?.[0]?.functionDeclarations ?? []).map((d) => d.name);
  const answered = call.body.contents.at(-1)!.parts.some((p) => 'functionResponse' in p);
  const parts: Record<string, unknown>[] = declared.length > 0 && !answered ? declared.map((name, n) => ({ functionCall: { name, args: { city: 'Paris' } }, ...(n === 0 ? { thoughtSignature: SIGNATURE } : {}) })) : [{ text: 'Hello from Gemini.' }];
  if (call.method === 'streamGenerateContent?alt=sse') {
    const first = 'text' in parts[0] ? [{ text: 'Hello ' }] : [{ text: 'Checking. ' }];
    const rest = 'text' in parts[0] ? [{ text: 'from Gemini.' }] : parts;
    return writeSse(res, [
      JSON.stringify(answer(call.body, [{ text: 'Considering.', thought: true }], { promptTokenCount: 12, thoughtsTokenCount: 2, totalTokenCount: 14 })),
      JSON.stringify(answer(call.body, first, { promptTokenCount: 12, candidatesTokenCount: 2, thoughtsTokenCount: 2, totalTokenCount: 16 })),
      JSON.stringify(answer(call.body, rest, USAGE, 'STOP')),
    ]);
  }
  if (call.method !== 'generateContent') return json(res, 404, { error: { code: 404, message: 'Not found', status: 'NOT_FOUND' } });
  return json(res, 200, answer(call.body, parts, USAGE, 'STOP'));
}

describe('vertex-gemini', () => {
  let tokens: FakeTokenEndpoint;
  let vertex: FakeUpstream;
  let gw: TestGateway;
  let openai: OpenAI;
  let anthropic: Anthropic;
  const calls: VertexCall[] = [];
  const refused: RecordedRequest[] = [];
  const ledger = async (response: Response) => (await ledgerForRequest(gw.services.db, response.headers.get('x-request-id')!))[0];

  beforeAll(async () => {
    tokens = await googleTokenEndpoint({ account, scope: SCOPE, clock });
    vertex = await FakeUpstream.start();
    vertex.route(async (req, res) => {
      if (!req.path.startsWith(PREFIX)) return false;
      const [model, method] = req.path.slice(PREFIX.length).split(':');
      const call = { model, method, body: req.body as Body };
      calls.push(call);
      await vertexGemini(call, res);
      return true;
    });
    // Routes added later run first: the gate sees every request before the API does.
    vertex.route(bearerGate((req) => tokens.accepts(req.headers.authorization), refused));
    const dir = mkdtempSync(join(tmpdir(), 'vertex-gemini-'));
    writeFileSync(join(dir, 'key.json'), account.keyFile(tokens.tokenUrl));
    gw = await startGateway({
      channels: { 'vertex-gemini': shipped },
      env: { VERTEX_BASE_URL: vertex.url, GOOGLE_CLOUD_PROJECT: 'test-project', GOOGLE_CLOUD_LOCATION: 'global', GOOGLE_APPLICATION_CREDENTIALS: join(dir, 'key.json') },
      overrides: { now: clock.now },
      listen: true,
    });
    openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: gw.key, baseURL: gw.url, maxRetries: 0 });
  });
  beforeEach(() => {
    calls.length = 0;
  });
  afterAll(async () => {
    await gw.close();
    await vertex.close();
    await tokens.close();
    expect(refused).toEqual([]);
  });

  it('the fake Vertex refuses a request without a token, or with one past its lifetime', async () => {
    const send = (authorization?: string) =>
      fetch(`${vertex.url}${PREFIX}gemini-3.5-flash:generateContent`, { method: 'POST', headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) }, body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }) });
    expect((await send()).status).toBe(401);
    await openai.chat.completions.create({ model: 'vertex/gemini-3.5-flash', messages: [{ role: 'user', content: 'hi' }] });
    const issued = tokens.tokens().at(-1)!;
    expect((await send(`Bearer ${issued}`)).status).toBe(200);
    clock.advance(tokens.lifetimeSeconds * 1000);
    expect((await send(`Bearer ${issued}`)).status).toBe(401);
    refused.length = 0;
  });

  it('reuses the access token within its hour and takes a new one after it, never sending an expired one', async () => {
    await openai.chat.completions.create({ model: 'vertex/gemini-3.5-flash', messages: [{ role: 'user', content: 'hi' }] });
    const before = tokens.requests.length;
    await openai.chat.completions.create({ model: 'vertex/gemini-3.5-flash', messages: [{ role: 'user', content: 'hi' }] });
    expect(tokens.requests.length).toBe(before);
    clock.advance(tokens.lifetimeSeconds * 1000);
    await openai.chat.completions.create({ model: 'vertex/gemini-3.5-flash', messages: [{ role: 'user', content: 'hi' }] });
    expect(tokens.requests.length).toBe(before + 1);
    expect(refused).toEqual([]);
  });

  it('translates chat to generateContent at the model id in the path, billed at the shipped price (thinking as output)', async () => {
    const { data, response } = await openai.chat.completions.create({ model: 'vertex/gemini-3.5-flash', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }], max_completion_tokens: 64 }).withResponse();
    expect(data).toMatchObject({ model: 'vertex/gemini-3.5-flash', choices: [{ message: { content: 'Hello from Gemini.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 12, completion_tokens: 7, completion_tokens_details: { reasoning_tokens: 2 } } });
    expect(calls).toEqual([{ model: 'gemini-3.5-flash', method: 'generateContent', body: { systemInstruction: { parts: [{ text: 'Be brief.' }] }, contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 64 } } }]);
    // 12 input tokens at $1.50/M, 5 + 2 output at $9.00/M: 18 + 63 micro-dollars.
    expect(await ledger(response)).toMatchObject({ model: 'vertex/gemini-3.5-flash', input_tokens: 12, output_tokens: 7, cost_micros: 81 });
    expect(data).toMatchObject({ cost: { amount: 0.000081, currency: 'USD' } });
  });

  it('streams chat from streamGenerateContent?alt=sse, billing the last chunk’s running totals, not their sum', async () => {
    const { data: stream, response } = await openai.chat.completions.create({ model: 'vertex/gemini-3.5-flash', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } }).withResponse();
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('Hello from Gemini.');
    expect(usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7 });
    expect(calls.map((c) => [c.model, c.method, 'stream' in c.body])).toEqual([['gemini-3.5-flash', 'streamGenerateContent?alt=sse', false]]);
    expect(await ledger(response)).toMatchObject({ input_tokens: 12, output_tokens: 7, cost_micros: 81 });
  });

  it('translates Responses to generateContent: instructions, a function tool, and the function_call item back', async () => {
    const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', description: 'Weather by city.', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false }, strict: true }];
    const { data: first, response } = await openai.responses.create({ model: 'vertex/gemini-3.5-flash', instructions: 'Be brief.', input: 'Weather in Paris?', tools, tool_choice: 'required', max_output_tokens: 256, temperature: 0.2 }).withResponse();
    expect(first).toMatchObject({ object: 'response', status: 'completed', model: 'vertex/gemini-3.5-flash', usage: { input_tokens: 12, output_tokens: 7, output_tokens_details: { reasoning_tokens: 2 }, total_tokens: 19 } });
    const call = first.output.find((item): item is OpenAI.Responses.ResponseFunctionToolCall => item.type === 'function_call')!;
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}', status: 'completed' });
    expect(first.output_text).toBe('');
    expect(calls[0]).toEqual({
      model: 'gemini-3.5-flash',
      method: 'generateContent',
      body: {
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        contents: [{ role: 'user', parts: [{ text: 'Weather in Paris?' }] }],
        tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'Weather by city.', parametersJsonSchema: tools[0].type === 'function' ? tools[0].parameters : null }] }],
        toolConfig: { functionCallingConfig: { mode: 'ANY' } },
        generationConfig: { maxOutputTokens: 256, temperature: 0.2 },
      },
    });
    expect(await ledger(response)).toMatchObject({ model: 'vertex/gemini-3.5-flash', input_tokens: 12, output_tokens: 7, cost_micros: 81 });

    // The client runs the tool and sends the call and its output back: a model content, then a functionResponse named after the call.
    const second = await openai.responses.create({ model: 'vertex/gemini-3.5-flash', input: [{ role: 'user', content: 'Weather in Paris?' }, call, { type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21 C.' }], tools });
    expect(second.output_text).toBe('Hello from Gemini.');
    expect(calls[1].body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIGNATURE }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: 'Sunny, 21 C.' } } }] },
    ]);
  });

  it('carries each call’s thought signature through chat and Messages tool loops, as Gemini 3 requires', async () => {
    const parameters = { type: 'object', properties: { city: { type: 'string' } } };
    const tools: OpenAI.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters } }, { type: 'function', function: { name: 'get_time', parameters } }];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather and time in Paris?' }];
    const first = await openai.chat.completions.create({ model: 'vertex/gemini-3.5-flash', messages, tools });
    expect(first.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { tool_calls: [{ function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }, { function: { name: 'get_time' } }] } });
    // Each tool result is a message of its own in chat; Gemini gets them in one content, as many as the calls.
    const results = first.choices[0].message.tool_calls!.map((c): OpenAI.ChatCompletionToolMessageParam => ({ role: 'tool', tool_call_id: c.id, content: 'Sunny.' }));
    const second = await openai.chat.completions.create({ model: 'vertex/gemini-3.5-flash', messages: [...messages, first.choices[0].message, ...results], tools });
    expect(second.choices[0].message.content).toBe('Hello from Gemini.');
    expect(calls[1].body.contents!.slice(1)).toEqual([
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIGNATURE }, { functionCall: { name: 'get_time', args: { city: 'Paris' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: 'Sunny.' } } }, { functionResponse: { name: 'get_time', response: { content: 'Sunny.' } } }] },
    ]);

    const claudeTools: Anthropic.Tool[] = [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
    const asked = await anthropic.messages.stream({ model: 'vertex/gemini-3.5-flash', max_tokens: 64, tools: claudeTools, messages: [{ role: 'user', content: 'Weather in Paris?' }] }).finalMessage();
    const use = asked.content.find((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use')!;
    expect(asked).toMatchObject({ stop_reason: 'tool_use' });
    const done = await anthropic.messages.create({ model: 'vertex/gemini-3.5-flash', max_tokens: 64, tools: claudeTools, messages: [{ role: 'user', content: 'Weather in Paris?' }, { role: 'assistant', content: asked.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'Sunny.' }] }] });
    expect(done.content).toEqual([{ type: 'text', text: 'Hello from Gemini.' }]);
    expect(calls[3].body.contents![1].parts.at(-1)).toEqual({ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIGNATURE });
  });

  it('relays Vertex’s refusal of a call sent back without its signature as a 400 naming the call', async () => {
    const error = await openai.chat.completions
      .create({ model: 'vertex/gemini-3.5-flash', messages: [{ role: 'user', content: 'Weather?' }, { role: 'assistant', content: null, tool_calls: [{ id: 'call_mine', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'call_mine', content: 'Sunny.' }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toContain('is missing a `thought_signature`');
  });

  it('translates a json_schema text format and a reasoning effort into generationConfig', async () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false };
    const answer = await openai.responses.create({ model: 'vertex/gemini-3.8-flash', input: 'Where is the Eiffel tower?', text: { format: { type: 'json_schema', name: 'place', schema } }, reasoning: { effort: 'high' } });
    expect(answer.model).toBe('vertex/gemini-3.8-flash');
    expect(calls[0]).toMatchObject({ model: 'gemini-3.8-flash', body: { generationConfig: { responseMimeType: 'application/json', responseJsonSchema: schema, thinkingConfig: { thinkingLevel: 'high' } } } });
  });

  it('streams Responses from streamGenerateContent?alt=sse: text and a function call as output items, billed from the last chunk', async () => {
    const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const { data: stream, response } = await openai.responses.create({ model: 'vertex/gemini-3.5-flash', input: 'Weather in Paris?', tools, stream: true }).withResponse();
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(events[0].type).toBe('response.created');
    const done = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(done.type).toBe('response.completed');
    expect(done.response.output).toMatchObject([
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking. ' }] },
      { type: 'function_call', name: 'get_weather', arguments: '{"city":"Paris"}' },
    ]);
    expect(done.response.usage).toMatchObject({ input_tokens: 12, output_tokens: 7, total_tokens: 19 });
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, n) => n));
    expect(calls.map((c) => c.method)).toEqual(['streamGenerateContent?alt=sse']);
    expect(await ledger(response)).toMatchObject({ input_tokens: 12, output_tokens: 7, cost_micros: 81 });

    // The SDK's own stream helper assembles the same answer.
    const final = await openai.responses.stream({ model: 'vertex/gemini-3.5-flash', input: 'hi' }).finalResponse();
    expect(final.output_text).toBe('Hello from Gemini.');
    expect(final.usage).toMatchObject({ input_tokens: 12, output_tokens: 7 });
  });

  it('refuses Responses fields Gemini cannot honour with a 400 naming them, sending nothing', async () => {
    const refusedWith = async (body: Partial<OpenAI.Responses.ResponseCreateParamsNonStreaming>) => {
      const error = await openai.responses.create({ model: 'vertex/gemini-3.5-flash', input: 'hi', ...body }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      return (error as InstanceType<typeof OpenAI.BadRequestError>).param;
    };
    expect(await refusedWith({ parallel_tool_calls: false })).toBe('parallel_tool_calls');
    expect(await refusedWith({ previous_response_id: 'resp_123' })).toBe('previous_response_id');
    expect(await refusedWith({ tools: [{ type: 'web_search' }] })).toBe('tools');
    expect(await refusedWith({ reasoning: { effort: 'minimal' } })).toBe('reasoning');
    expect(await refusedWith({ input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/cat.png', detail: 'auto' }] }] })).toBe('input');
    expect(calls).toEqual([]);
  });

  it('translates Anthropic Messages, streamed and not, billed at the shipped price', async () => {
    const { data: message, response } = await anthropic.messages.create({ model: 'vertex/gemini-3.5-flash', max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(message).toMatchObject({ model: 'vertex/gemini-3.5-flash', content: [{ type: 'text', text: 'Hello from Gemini.' }], stop_reason: 'end_turn', usage: { input_tokens: 12, output_tokens: 7 } });
    expect(calls[0]).toEqual({ model: 'gemini-3.5-flash', method: 'generateContent', body: { systemInstruction: { parts: [{ text: 'Be brief.' }] }, contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 64 } } });
    expect(await ledger(response)).toMatchObject({ input_tokens: 12, output_tokens: 7, cost_micros: 81 });
    const streamed = anthropic.messages.stream({ model: 'vertex/gemini-3.8-flash', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    const final = await streamed.finalMessage();
    expect(final).toMatchObject({ model: 'vertex/gemini-3.8-flash', content: [{ type: 'text', text: 'Hello from Gemini.' }], usage: { input_tokens: 12, output_tokens: 7 } });
    expect(calls[1]).toMatchObject({ model: 'gemini-3.8-flash', method: 'streamGenerateContent?alt=sse' });
    // 12 input tokens at $0.75/M and 7 output at $3.75/M: 9 + 26.25 micro-dollars, rounded to the micro-dollar.
    const row = await ledger((await streamed.withResponse()).response);
    expect(row).toMatchObject({ model: 'vertex/gemini-3.8-flash', input_tokens: 12, output_tokens: 7, cost_micros: 35 });
  });
});
