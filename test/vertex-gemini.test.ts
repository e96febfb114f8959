// The shipped channels/vertex-gemini.yaml through the official openai and Anthropic SDKs, against a fake of Vertex AI's
// OpenAI-compatible endpoint on 127.0.0.1 that refuses every request without an unexpired access token from a fake
// Google token endpoint (which verifies the service account's RS256 assertion with the public key of a key pair made here).
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerForRequest } from '../src/store/usage-ledger.js';
import { bearerGate, googleTokenEndpoint, newServiceAccount, testClock, type FakeTokenEndpoint } from './kit/fake-cloud-auth.js';
import { FakeUpstream, json, writeSse, type RecordedRequest } from './kit/fake-upstream.js';
import { repoRoot, startGateway, type TestGateway } from './kit/gateway.js';

const shipped = readFileSync(join(repoRoot, 'channels', 'vertex-gemini.yaml'), 'utf8');
const ENDPOINT = '/v1/projects/test-project/locations/global/endpoints/openapi/chat/completions';
const clock = testClock();
const account = newServiceAccount();

describe('vertex-gemini', () => {
  let tokens: FakeTokenEndpoint;
  let vertex: FakeUpstream;
  let gw: TestGateway;
  const refused: RecordedRequest[] = [];

  beforeAll(async () => {
    tokens = await googleTokenEndpoint({ account, scope: 'https://www.googleapis.com/auth/cloud-platform', clock });
    vertex = await FakeUpstream.start();
    vertex.route(bearerGate((req) => tokens.accepts(req.headers.authorization), refused));
    const dir = mkdtempSync(join(tmpdir(), 'vertex-gemini-'));
    writeFileSync(join(dir, 'key.json'), account.keyFile(tokens.tokenUrl));
    gw = await startGateway({
      channels: { 'vertex-gemini': shipped },
      env: { VERTEX_BASE_URL: vertex.url, GOOGLE_CLOUD_PROJECT: 'test-project', GOOGLE_CLOUD_LOCATION: 'global', GOOGLE_APPLICATION_CREDENTIALS: join(dir, 'key.json') },
      overrides: { now: clock.now },
      listen: true,
    });
  });
  afterAll(async () => {
    await gw.close();
    await vertex.close();
    await tokens.close();
  });

  it('relays chat, streamed and not, to the project endpoint with a bearer token, billed at the shipped price', async () => {
    vertex.reset();
    const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const { data, response } = await client.chat.completions.create({ model: 'vertex/gemini-3.5-flash', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.model).toBe('vertex/gemini-3.5-flash');
    expect(vertex.last).toMatchObject({ path: ENDPOINT, body: { model: 'google/gemini-3.5-flash' } });
    // 12 input tokens at $1.50/M and 7 output at $9.00/M.
    const ledger = await ledgerForRequest(gw.services.db, response.headers.get('x-request-id')!);
    expect(ledger[0]).toMatchObject({ model: 'vertex/gemini-3.5-flash', input_tokens: 12, output_tokens: 7, cost_micros: 81 });
    const stream = await client.chat.completions.create({ model: 'vertex/gemini-3.5-flash', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello from the fake upstream.');
    expect(refused).toEqual([]);
    expect(tokens.requests).toHaveLength(1);
  });

  it('translates Anthropic Messages clients to chat', async () => {
    const client = new Anthropic({ apiKey: gw.key, baseURL: gw.url, maxRetries: 0 });
    const message = await client.messages.create({ model: 'vertex/gemini-3.8-flash', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] });
    expect(message.model).toBe('vertex/gemini-3.8-flash');
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from the fake upstream.' }]);
    expect(vertex.last).toMatchObject({ path: ENDPOINT, body: { model: 'google/gemini-3.8-flash' } });
    expect(refused).toEqual([]);
  });
});

// Vertex AI's native Gemini API (channels/protocols/gemini-generate-content.yaml), on a channel of the operator's own
// (none ships yet): the fake answers generateContent and streamGenerateContent?alt=sse as Google's reference shows them,
// refusing a body with `model` or `stream` members, and each stream chunk carries the usage totals so far.
describe('gemini-generate-content on Vertex AI', () => {
  const PREFIX = '/v1/projects/test-project/locations/global/publishers/google/models/';
  const nativeChannel = `id: vertex-gemini-native
protocol: gemini-generate-content
baseUrl: \${VERTEX_BASE_URL}/v1/projects/\${GOOGLE_CLOUD_PROJECT}/locations/\${GOOGLE_CLOUD_LOCATION}
credential: { kind: google-service-account, keyFileEnv: GOOGLE_APPLICATION_CREDENTIALS, scope: https://www.googleapis.com/auth/cloud-platform }
models:
  - id: native/gemini-3.5-flash
    upstream: gemini-3.5-flash
    kind: chat
    price: { inputPerMillion: 1.50, outputPerMillion: 9.00, cachedInputPerMillion: 0.15 }
`;
  let tokens: FakeTokenEndpoint;
  let vertex: FakeUpstream;
  let gw: TestGateway;
  const refused: RecordedRequest[] = [];
  const seen: { path: string; body: Record<string, unknown> }[] = [];

  beforeAll(async () => {
    tokens = await googleTokenEndpoint({ account, scope: 'https://www.googleapis.com/auth/cloud-platform', clock });
    vertex = await FakeUpstream.start();
    vertex.route(async (req, res) => {
      if (!req.path.startsWith(PREFIX)) return false;
      const body = req.body as Record<string, unknown>;
      seen.push({ path: req.path.slice(PREFIX.length), body });
      if ('model' in body || 'stream' in body || !Array.isArray(body.contents)) {
        json(res, 400, { error: { code: 400, message: 'Invalid JSON payload received. Unknown name "model".', status: 'INVALID_ARGUMENT' } });
        return true;
      }
      const chunk = (parts: unknown[], usage: Record<string, number>, finishReason?: string) => ({ candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}) }], usageMetadata: usage, modelVersion: 'gemini-3.5-flash', responseId: 'resp-1' });
      if (req.path.endsWith(':streamGenerateContent?alt=sse')) {
        await writeSse(res, [
          JSON.stringify(chunk([{ text: 'Hello ' }], { promptTokenCount: 12, candidatesTokenCount: 2, totalTokenCount: 14 })),
          JSON.stringify(chunk([{ text: 'from Gemini.' }], { promptTokenCount: 12, candidatesTokenCount: 5, thoughtsTokenCount: 2, totalTokenCount: 19 }, 'STOP')),
        ]);
        return true;
      }
      json(res, 200, chunk([{ text: 'Hello from Gemini.' }], { promptTokenCount: 12, candidatesTokenCount: 5, thoughtsTokenCount: 2, totalTokenCount: 19 }, 'STOP'));
      return true;
    });
    vertex.route(bearerGate((req) => tokens.accepts(req.headers.authorization), refused));
    const dir = mkdtempSync(join(tmpdir(), 'vertex-native-'));
    writeFileSync(join(dir, 'key.json'), account.keyFile(tokens.tokenUrl));
    gw = await startGateway({
      channels: { 'vertex-gemini-native': nativeChannel },
      env: { VERTEX_BASE_URL: vertex.url, GOOGLE_CLOUD_PROJECT: 'test-project', GOOGLE_CLOUD_LOCATION: 'global', GOOGLE_APPLICATION_CREDENTIALS: join(dir, 'key.json') },
      overrides: { now: clock.now },
      listen: true,
    });
  });
  afterAll(async () => {
    await gw.close();
    await vertex.close();
    await tokens.close();
  });

  it('translates chat to generateContent and back, billing the reported usage (thinking as output)', async () => {
    const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const { data, response } = await client.chat.completions.create({ model: 'native/gemini-3.5-flash', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] }).withResponse();
    expect(data.model).toBe('native/gemini-3.5-flash');
    expect(data.choices[0].message.content).toBe('Hello from Gemini.');
    expect(data.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7 });
    expect(seen.at(-1)).toEqual({ path: 'gemini-3.5-flash:generateContent', body: { systemInstruction: { parts: [{ text: 'Be brief.' }] }, contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: {} } });
    // 12 input tokens at $1.50/M, 5 + 2 output at $9.00/M.
    const ledger = await ledgerForRequest(gw.services.db, response.headers.get('x-request-id')!);
    expect(ledger[0]).toMatchObject({ input_tokens: 12, output_tokens: 7, cost_micros: 81 });
    expect(refused).toEqual([]);
  });

  it('translates Anthropic Messages, streamed and not', async () => {
    const client = new Anthropic({ apiKey: gw.key, baseURL: gw.url, maxRetries: 0 });
    const message = await client.messages.create({ model: 'native/gemini-3.5-flash', max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }] });
    expect(message).toMatchObject({ model: 'native/gemini-3.5-flash', content: [{ type: 'text', text: 'Hello from Gemini.' }], stop_reason: 'end_turn', usage: { input_tokens: 12, output_tokens: 7 } });
    expect(seen.at(-1)).toEqual({ path: 'gemini-3.5-flash:generateContent', body: { systemInstruction: { parts: [{ text: 'Be brief.' }] }, contents: [{ role: 'user', parts: [{ text: 'hi' }] }], generationConfig: { maxOutputTokens: 64 } } });
    const streamed = await client.messages.stream({ model: 'native/gemini-3.5-flash', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    expect(streamed).toMatchObject({ model: 'native/gemini-3.5-flash', content: [{ type: 'text', text: 'Hello from Gemini.' }], usage: { input_tokens: 12, output_tokens: 7 } });
    expect(seen.at(-1)!.path).toBe('gemini-3.5-flash:streamGenerateContent?alt=sse');
    expect(refused).toEqual([]);
  });

  it('streams from streamGenerateContent?alt=sse, billing the last running totals, not their sum', async () => {
    const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const { data: stream, response } = await client.chat.completions.create({ model: 'native/gemini-3.5-flash', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } }).withResponse();
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('Hello from Gemini.');
    expect(usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7 });
    expect(seen.at(-1)!.path).toBe('gemini-3.5-flash:streamGenerateContent?alt=sse');
    const ledger = await ledgerForRequest(gw.services.db, response.headers.get('x-request-id')!);
    expect(ledger[0]).toMatchObject({ input_tokens: 12, output_tokens: 7, cost_micros: 81 });
    expect(refused).toEqual([]);
  });
});
