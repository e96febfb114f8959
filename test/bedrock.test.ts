// The shipped Bedrock channel (channels/bedrock.yaml on channels/protocols/bedrock-converse.yaml) against a fake Bedrock
// runtime on 127.0.0.1 (AWS_ENDPOINT_URL_BEDROCK_RUNTIME, as the AWS SDKs read it): the official openai and
// @anthropic-ai/sdk clients, streamed and not, every request's SigV4 signature recomputed by the fake with node:crypto,
// ConverseStream answered as real event-stream frames (CRCs by node's zlib), and each answer billed at the shipped price.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { parse } from 'yaml';
import { FakeUpstream } from './kit/fake-upstream.js';
import { FakeBedrock } from './kit/fake-bedrock.js';
import type { AwsKeys } from './kit/fake-cloud-auth.js';
import { repoRoot, startGateway, type TestGateway } from './kit/gateway.js';

const KEYS: AwsKeys = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token-of-an-assumed-role', region: 'eu-west-3', service: 'bedrock' };

const channelText = readFileSync(join(repoRoot, 'channels', 'bedrock.yaml'), 'utf8');
interface Price {
  inputPerMillion: number;
  outputPerMillion: number;
  cachedInputPerMillion?: number;
  cacheWritePerMillion?: number;
}
const shipped = new Map((parse(channelText) as { models: { id: string; upstream: string; price: Price }[] }).models.map((m) => [m.id, m]));

/** The shipped price times Bedrock's usage, in USD: inputTokens, cache reads and cache writes each at their own price. */
function priced(id: string, u: { inputTokens: number; outputTokens: number; cacheReadInputTokens?: number; cacheWriteInputTokens?: number }): number {
  const p = shipped.get(id)!.price;
  const micros =
    u.inputTokens * p.inputPerMillion +
    (u.cacheReadInputTokens ?? 0) * (p.cachedInputPerMillion ?? p.inputPerMillion) +
    (u.cacheWriteInputTokens ?? 0) * (p.cacheWritePerMillion ?? p.inputPerMillion) +
    u.outputTokens * p.outputPerMillion;
  return Math.round(micros) / 1e6;
}

let upstream: FakeUpstream;
let bedrock: FakeBedrock;
let gw: TestGateway;
const openai = () => new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
const anthropic = () => new Anthropic({ apiKey: gw.key, baseURL: gw.url, maxRetries: 0 });
const converseCalls = () => upstream.requests.filter((r) => r.path.startsWith('/model/'));
/** What the usage ledger charged for a model's requests, in micro-USD, newest first. */
const ledgerCharges = async (model: string) =>
  (await gw.services.db.selectFrom('usage_ledger').select(['cost_micros', 'cached_input_tokens']).where('model', '=', model).orderBy('created_at', 'desc').execute()).map((row) => Number(row.cost_micros));

beforeAll(async () => {
  upstream = await FakeUpstream.start();
  bedrock = new FakeBedrock({ ...KEYS });
  upstream.route(bedrock.route);
  gw = await startGateway({
    channels: { 'bedrock.yaml': channelText },
    env: { AWS_REGION: KEYS.region, AWS_ACCESS_KEY_ID: KEYS.accessKeyId, AWS_SECRET_ACCESS_KEY: KEYS.secretAccessKey, AWS_SESSION_TOKEN: KEYS.sessionToken, AWS_ENDPOINT_URL_BEDROCK_RUNTIME: upstream.url },
    listen: true,
  });
});
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
});
beforeEach(() => {
  upstream.reset();
  bedrock.refusals.length = 0;
  bedrock.keys = { ...KEYS };
  bedrock.script = { text: 'Hello from Bedrock.', stopReason: 'end_turn', usage: { inputTokens: 1000, outputTokens: 500, cacheReadInputTokens: 4000, cacheWriteInputTokens: 2000 } };
});

describe('the Bedrock channel file', () => {
  it('stays disabled until its variables are set, and names the one missing', async () => {
    const { loadConfig } = await import('../src/compile/load-config.js');
    const config = await loadConfig(join(repoRoot, 'config.example.yaml'), { env: {} });
    expect(config.channels.find((c) => c.id === 'bedrock')!.disabledReason).toMatch(/AWS_REGION is not set/);
  });

  it('ships a Claude, an Amazon Nova and a Llama model, priced with their cache token classes where they have them', () => {
    expect(shipped.get('bedrock/claude-sonnet-4-5')!.upstream).toBe('global.anthropic.claude-sonnet-4-5-20250929-v1:0');
    expect(shipped.get('bedrock/claude-sonnet-4-5')!.price).toMatchObject({ cachedInputPerMillion: 0.3, cacheWritePerMillion: 3.75 });
    expect(shipped.get('bedrock/nova-pro')!.upstream).toBe('amazon.nova-pro-v1:0');
    expect(shipped.get('bedrock/llama-3-3-70b')!.upstream).toBe('us.meta.llama3-3-70b-instruct-v1:0');
  });
});

describe('OpenAI chat clients on Bedrock', () => {
  it('reach Converse signed (SigV4, service bedrock, session token), the model id encoded in the path, only Converse fields in the body, billed at the shipped price', async () => {
    const completion = await openai().chat.completions.create({
      model: 'bedrock/claude-sonnet-4-5',
      max_completion_tokens: 300,
      temperature: 0.5,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(bedrock.refusals).toEqual([]);
    const [call] = converseCalls();
    expect(call.path).toBe('/model/global.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse');
    expect(call.headers['x-amz-security-token']).toBe(KEYS.sessionToken);
    expect(String(call.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/eu-west-3\/bedrock\/aws4_request, SignedHeaders=[^,]*host[^,]*x-amz-date/);
    expect(call.body).toEqual({ messages: [{ role: 'user', content: [{ text: 'hi' }] }], system: [{ text: 'Be brief.' }], inferenceConfig: { maxTokens: 300, temperature: 0.5 } });

    expect(completion.model).toBe('bedrock/claude-sonnet-4-5');
    expect(completion.choices[0].message.content).toBe('Hello from Bedrock.');
    expect(completion.choices[0].finish_reason).toBe('stop');
    // Converse's inputTokens leaves out the cache reads and writes: the prompt is all three.
    expect(completion.usage).toMatchObject({ prompt_tokens: 7000, completion_tokens: 500, prompt_tokens_details: { cached_tokens: 4000 } });
    expect((completion as unknown as { cost: unknown }).cost).toEqual({ amount: priced('bedrock/claude-sonnet-4-5', bedrock.script.usage), currency: 'USD' });
    expect(await ledgerCharges('bedrock/claude-sonnet-4-5')).toEqual([Math.round(priced('bedrock/claude-sonnet-4-5', bedrock.script.usage) * 1e6)]);
  });

  it('stream from ConverseStream event frames, text in order, usage and cost on the final chunk', async () => {
    bedrock.script = { text: 'Streaming from Bedrock.', stopReason: 'end_turn', usage: { inputTokens: 40, outputTokens: 9, cacheReadInputTokens: 100 } };
    const stream = await openai().chat.completions.create({ model: 'bedrock/nova-pro', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    let last: (OpenAI.Chat.Completions.ChatCompletionChunk & { cost?: unknown }) | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      last = chunk;
    }
    expect(bedrock.refusals).toEqual([]);
    expect(converseCalls()[0].path).toBe('/model/amazon.nova-pro-v1%3A0/converse-stream');
    expect(converseCalls()[0].body).not.toHaveProperty('stream');
    expect(text).toBe('Streaming from Bedrock.');
    expect(last!.usage).toMatchObject({ prompt_tokens: 140, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 100 } });
    expect(last!.cost).toEqual({ amount: priced('bedrock/nova-pro', bedrock.script.usage), currency: 'USD' });
    expect(await ledgerCharges('bedrock/nova-pro')).toEqual([Math.round(priced('bedrock/nova-pro', bedrock.script.usage) * 1e6)]);
  });

  it('get a streamed tool call, its arguments assembled from Converse toolUse deltas', async () => {
    bedrock.script = { text: '', toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } }, stopReason: 'tool_use', usage: { inputTokens: 30, outputTokens: 12 } };
    const stream = openai().chat.completions.stream({
      model: 'bedrock/claude-haiku-4-5',
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    });
    const completion = await stream.finalChatCompletion();
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    expect(completion.choices[0].message.tool_calls![0]).toMatchObject({ id: 'tooluse_1', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } });
    expect(converseCalls()[0].body.toolConfig.tools[0].toolSpec.name).toBe('get_weather');
  });

  it('see an exception frame mid-stream as an error in their own dialect (throttling keeps its 429 meaning)', async () => {
    bedrock.script = { ...bedrock.script, exception: { after: 3, type: 'throttlingException', message: 'Too many tokens, please wait before trying again.' } };
    const stream = await openai().chat.completions.create({ model: 'bedrock/nova-lite', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    let text = '';
    const failure = await (async () => {
      try {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      } catch (err) {
        return err as InstanceType<typeof OpenAI.APIError>;
      }
    })();
    expect(text).toBe('Hello from Bedrock.');
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(failure!.message).toMatch(/channel "bedrock" is rate limited upstream: Too many tokens, please wait before trying again\./);
    expect((failure!.error as { code?: string }).code).toBe('rate_limit_exceeded');
  });

  it('see a frame that fails its CRC as a malformed upstream, never as text', async () => {
    bedrock.script = { ...bedrock.script, corruptEvent: 2 };
    const stream = await openai().chat.completions.create({ model: 'bedrock/nova-micro', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    const failure = await (async () => {
      try {
        for await (const _ of stream);
      } catch (err) {
        return err as InstanceType<typeof OpenAI.APIError>;
      }
    })();
    expect((failure!.error as { code?: string }).code).toBe('upstream_malformed');
    expect(failure!.message).toMatch(/frame is corrupt/);
  });

  it('get a typed 502 naming the channel when Bedrock refuses the signature, and the secret appears nowhere', async () => {
    bedrock.keys = { ...KEYS, secretAccessKey: 'the-secret-bedrock-expects' };
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'bedrock/nova-pro', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const text = await res.text();
    expect(bedrock.refusals).toEqual(['signature does not match']);
    expect(res.status).toBe(502);
    expect(JSON.parse(text).error).toMatchObject({ code: 'upstream_auth_failed', message: 'channel "bedrock" refused the gateway\'s credentials' });
    expect(text).not.toContain(KEYS.secretAccessKey);
    expect(text).not.toContain(KEYS.sessionToken);
  });

  it('get Bedrock\'s validation error as a 400 with its message', async () => {
    // Converse refuses a blank text block; the fake says so as Bedrock does.
    const res = await openai()
      .chat.completions.create({ model: 'bedrock/nova-pro', messages: [{ role: 'user', content: '' }] })
      .catch((err: unknown) => err as InstanceType<typeof OpenAI.APIError>);
    expect(res).toBeInstanceOf(OpenAI.BadRequestError);
    expect((res as InstanceType<typeof OpenAI.APIError>).message).toMatch(/The text field in the ContentBlock object is blank/);
  });
});

describe('Anthropic Messages clients on Bedrock', () => {
  it('send tools, tool results and cache points through Converse and get Anthropic usage with cache reads and writes apart, billed at the shipped price', async () => {
    bedrock.script = { text: 'Checking.', toolUse: { toolUseId: 'tooluse_2', name: 'get_weather', input: { city: 'Rome' } }, stopReason: 'tool_use', usage: { inputTokens: 1000, outputTokens: 500, cacheReadInputTokens: 4000, cacheWriteInputTokens: 2000 } };
    const message = await anthropic().messages.create({
      model: 'bedrock/claude-sonnet-4-5',
      max_tokens: 1024,
      system: [{ type: 'text', text: 'A long system prompt.', cache_control: { type: 'ephemeral' } }],
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
      messages: [
        { role: 'user', content: 'Weather in Paris?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny.' }, { type: 'text', text: 'And Rome?' }] },
      ],
    });
    expect(bedrock.refusals).toEqual([]);
    const body = converseCalls()[0].body;
    expect(body.system).toEqual([{ text: 'A long system prompt.' }, { cachePoint: { type: 'default' } }]);
    expect(body.messages[2].content).toEqual([{ toolResult: { toolUseId: 'toolu_1', content: [{ text: 'Sunny.' }] } }, { text: 'And Rome?' }]);
    expect(body.inferenceConfig).toEqual({ maxTokens: 1024 });

    expect(message.model).toBe('bedrock/claude-sonnet-4-5');
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'tooluse_2', name: 'get_weather', input: { city: 'Rome' } },
    ]);
    expect(message.usage).toMatchObject({ input_tokens: 1000, output_tokens: 500, cache_read_input_tokens: 4000, cache_creation_input_tokens: 2000 });
    expect((message as unknown as { cost: unknown }).cost).toEqual({ amount: priced('bedrock/claude-sonnet-4-5', bedrock.script.usage), currency: 'USD' });
  });

  it('stream from ConverseStream into Messages events, the final usage and cost on message_delta', async () => {
    const stream = anthropic().messages.stream({ model: 'bedrock/claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    let cost: unknown;
    stream.on('streamEvent', (event) => {
      if (event.type === 'message_delta') cost = (event as unknown as { cost: unknown }).cost;
    });
    const message = await stream.finalMessage();
    expect(bedrock.refusals).toEqual([]);
    expect(converseCalls()[0].path).toBe('/model/global.anthropic.claude-haiku-4-5-20251001-v1%3A0/converse-stream');
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from Bedrock.' }]);
    expect(message.usage).toMatchObject({ input_tokens: 1000, output_tokens: 500, cache_read_input_tokens: 4000, cache_creation_input_tokens: 2000 });
    expect(cost).toEqual({ amount: priced('bedrock/claude-haiku-4-5', bedrock.script.usage), currency: 'USD' });
  });

  it('think on a Claude model: the budget reaches Converse, the signed thinking streams back and returns as reasoningContent', async () => {
    bedrock.script = { ...bedrock.script, reasoning: { text: 'The user greets me.', signature: 'c2lnbmVkLXRoaW5raW5n' } };
    const message = await anthropic()
      .messages.stream({ model: 'bedrock/claude-sonnet-4-5', max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 2048 }, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage();
    expect(converseCalls()[0].body.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'The user greets me.', signature: 'c2lnbmVkLXRoaW5raW5n' },
      { type: 'text', text: 'Hello from Bedrock.' },
    ]);
    // The next turn sends the signed thinking back, as Converse wants it.
    await anthropic().messages.create({
      model: 'bedrock/claude-sonnet-4-5',
      max_tokens: 4000,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: message.content }, { role: 'user', content: 'And?' }],
    });
    expect(converseCalls()[1].body.messages[1].content[0]).toEqual({ reasoningContent: { reasoningText: { text: 'The user greets me.', signature: 'c2lnbmVkLXRoaW5raW5n' } } });
    expect(bedrock.refusals).toEqual([]);
  });

  it('see an exception frame as an Anthropic error event of the matching type', async () => {
    bedrock.script = { ...bedrock.script, exception: { after: 2, type: 'serviceUnavailableException', message: 'Bedrock is unavailable.' } };
    const stream = anthropic().messages.stream({ model: 'bedrock/claude-haiku-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    const failure = (await stream.finalMessage().then(
      () => undefined,
      (err: unknown) => err,
    )) as InstanceType<typeof Anthropic.APIError>;
    expect(failure).toBeInstanceOf(Anthropic.APIError);
    // ServiceUnavailableException is a 503: Anthropic's overloaded_error on the Messages route.
    expect(failure.message).toMatch(/is unavailable \(status 503\)/);
    expect((failure.error as { error?: { type?: string } }).error?.type).toBe('overloaded_error');
  });
});

describe('Responses clients on Bedrock', () => {
  it('get a Responses answer from Converse, billed at the shipped price', async () => {
    bedrock.script = { text: 'Hi from Nova.', stopReason: 'end_turn', usage: { inputTokens: 15, outputTokens: 4 } };
    const response = await openai().responses.create({ model: 'bedrock/nova-lite', instructions: 'Be brief.', input: 'hi' });
    expect(bedrock.refusals).toEqual([]);
    expect(converseCalls()[0].body).toEqual({ messages: [{ role: 'user', content: [{ text: 'hi' }] }], system: [{ text: 'Be brief.' }] });
    expect(response.output_text).toBe('Hi from Nova.');
    expect(response.usage).toMatchObject({ input_tokens: 15, output_tokens: 4 });
    expect((response as unknown as { cost: unknown }).cost).toEqual({ amount: priced('bedrock/nova-lite', bedrock.script.usage), currency: 'USD' });
  });

  it('stream a Responses answer from ConverseStream', async () => {
    const stream = openai().responses.stream({ model: 'bedrock/llama-3-3-70b', input: 'hi' });
    const response = await stream.finalResponse();
    expect(converseCalls()[0].path).toBe('/model/us.meta.llama3-3-70b-instruct-v1%3A0/converse-stream');
    expect(response.output_text).toBe('Hello from Bedrock.');
    expect(response.usage).toMatchObject({ input_tokens: 7000, output_tokens: 500 });
  });
});
