// The shipped channels/vertex-claude.yaml (protocol anthropic-vertex) through the official Anthropic and OpenAI SDKs,
// against a fake Vertex AI on 127.0.0.1 built from Google's reference: rawPredict / streamRawPredict at a path naming
// the model, the body with anthropic_version "vertex-2023-10-16" and no model, `stream: true` only when streaming, and
// every request refused without an unexpired access token from a fake Google token endpoint, which itself verifies the
// service account's RS256 assertion against the public key of a key pair made here.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerForRequest } from '../src/store/usage-ledger.js';
import { googleTokenEndpoint, newServiceAccount, testClock, type FakeTokenEndpoint } from './kit/fake-cloud-auth.js';
import { anthropicMessages } from './kit/fake-anthropic.js';
import { FakeUpstream, json, type RecordedRequest } from './kit/fake-upstream.js';
import { repoRoot, startGateway, type TestGateway } from './kit/gateway.js';

const shipped = readFileSync(join(repoRoot, 'channels', 'vertex-claude.yaml'), 'utf8');
const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
const PREFIX = '/v1/projects/test-project/locations/us-east5/publishers/anthropic/models/';
const clock = testClock();
const account = newServiceAccount();
const dir = mkdtempSync(join(tmpdir(), 'vertex-'));

/** What the fake Vertex AI saw of each Claude call: the model and method named by the path, and the body. */
interface VertexCall {
  model: string;
  method: string;
  body: Record<string, unknown>;
  headers: RecordedRequest['headers'];
}

/** Claude's routes on the fake Vertex AI: the body checked as Google's reference says, then answered as Anthropic's Messages. */
function installVertexClaude(fake: FakeUpstream, calls: VertexCall[]) {
  fake.route(async (req, res) => {
    if (req.method !== 'POST' || !req.path.startsWith(PREFIX)) return false;
    const [model, method] = req.path.slice(PREFIX.length).split(':');
    const body = req.body as Record<string, unknown>;
    calls.push({ model, method, body, headers: req.headers });
    const invalid = (message: string) => json(res, 400, { error: { code: 400, message, status: 'INVALID_ARGUMENT' } });
    if (body.anthropic_version !== 'vertex-2023-10-16') return (invalid('anthropic_version: must be vertex-2023-10-16'), true);
    if (model === 'count-tokens' && method === 'rawPredict') return (json(res, 200, { input_tokens: 42 }), true);
    if ('model' in body) return (invalid('model: Extra inputs are not permitted'), true);
    if ((method === 'streamRawPredict') !== (body.stream === true)) return (invalid(`stream must be true exactly on streamRawPredict (${method})`), true);
    if (method !== 'rawPredict' && method !== 'streamRawPredict') return (json(res, 404, { error: { code: 404, message: 'not found', status: 'NOT_FOUND' } }), true);
    return anthropicMessages({ ...req, path: '/messages', body: { ...body, model } }, res, fake);
  });
}

describe('vertex-claude', () => {
  let tokens: FakeTokenEndpoint;
  let vertex: FakeUpstream;
  let gw: TestGateway;
  let anthropic: Anthropic;
  let openai: OpenAI;
  const calls: VertexCall[] = [];
  const refused: RecordedRequest[] = [];

  beforeAll(async () => {
    tokens = await googleTokenEndpoint({ account, scope: SCOPE, clock });
    vertex = await FakeUpstream.start();
    installVertexClaude(vertex, calls);
    vertex.route((req, res) => {
      if (tokens.accepts(req.headers.authorization)) return false;
      refused.push(req);
      json(res, 401, { error: { code: 401, message: 'Request had invalid authentication credentials.', status: 'UNAUTHENTICATED' } });
      return true;
    });
    writeFileSync(join(dir, 'key.json'), account.keyFile(tokens.tokenUrl));
    gw = await startGateway({
      channels: { 'vertex-claude': shipped },
      env: { VERTEX_BASE_URL: vertex.url, GOOGLE_CLOUD_PROJECT: 'test-project', GOOGLE_CLOUD_LOCATION: 'us-east5', GOOGLE_APPLICATION_CREDENTIALS: join(dir, 'key.json') },
      overrides: { now: clock.now },
      listen: true,
    });
    anthropic = new Anthropic({ apiKey: gw.key, baseURL: gw.url, maxRetries: 0 });
    openai = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
    await vertex.close();
    await tokens.close();
  });

  it('relays Messages to rawPredict with the model in the path and anthropic_version in the body, billed at the shipped price', async () => {
    calls.length = 0;
    const { data, response } = await anthropic.messages.create({ model: 'vertex/claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.model).toBe('vertex/claude-haiku-4-5');
    expect(data.content).toEqual([{ type: 'text', text: 'Hello from the fake upstream.' }]);
    expect(calls).toEqual([expect.objectContaining({ model: 'claude-haiku-4-5@20251001', method: 'rawPredict', body: { anthropic_version: 'vertex-2023-10-16', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] } })]);
    expect(refused).toEqual([]);
    // 12 input tokens at $1.00/M and 7 output at $5.00/M.
    const ledger = await ledgerForRequest(gw.services.db, response.headers.get('x-request-id')!);
    expect(ledger[0]).toMatchObject({ model: 'vertex/claude-haiku-4-5', input_tokens: 12, output_tokens: 7, cost_micros: 47 });
  });

  it('streams Messages from streamRawPredict, forwarding anthropic-beta but not anthropic-version', async () => {
    calls.length = 0;
    const stream = anthropic.messages.stream({ model: 'vertex/claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'anthropic-beta': 'context-1m-2025-08-07' } });
    const message = await stream.finalMessage();
    expect(message.model).toBe('vertex/claude-haiku-4-5');
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from the fake upstream.' }]);
    expect(message.usage).toMatchObject({ input_tokens: 12, output_tokens: 7 });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ model: 'claude-haiku-4-5@20251001', method: 'streamRawPredict', body: { anthropic_version: 'vertex-2023-10-16', stream: true } });
    expect(calls[0].headers['anthropic-beta']).toBe('context-1m-2025-08-07');
    expect(calls[0].headers['anthropic-version']).toBeUndefined();
    expect(refused).toEqual([]);
  });

  it('translates OpenAI chat clients, streamed and not', async () => {
    calls.length = 0;
    const answer = await openai.chat.completions.create({ model: 'vertex/claude-sonnet-5-5', messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.model).toBe('vertex/claude-sonnet-5-5');
    expect(answer.choices[0].message.content).toBe('Hello from the fake upstream.');
    const stream = await openai.chat.completions.create({ model: 'vertex/claude-sonnet-5-5', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('Hello from the fake upstream.');
    expect(calls.map((c) => [c.model, c.method, 'model' in c.body, c.body.anthropic_version])).toEqual([
      ['claude-sonnet-5-5', 'rawPredict', false, 'vertex-2023-10-16'],
      ['claude-sonnet-5-5', 'streamRawPredict', false, 'vertex-2023-10-16'],
    ]);
    expect(refused).toEqual([]);
  });

  it('counts tokens at count-tokens:rawPredict, the model in the body', async () => {
    calls.length = 0;
    const count = await anthropic.messages.countTokens({ model: 'vertex/claude-haiku-4-5', messages: [{ role: 'user', content: 'hi' }] });
    expect(count.input_tokens).toBe(42);
    expect(calls[0]).toMatchObject({ model: 'count-tokens', method: 'rawPredict', body: { model: 'claude-haiku-4-5@20251001', anthropic_version: 'vertex-2023-10-16' } });
  });

  it('reuses the access token within its hour and takes a new one after it', async () => {
    const before = tokens.requests.length;
    await anthropic.messages.create({ model: 'vertex/claude-haiku-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] });
    expect(tokens.requests.length).toBe(before);
    clock.advance(tokens.lifetimeSeconds * 1000);
    await anthropic.messages.create({ model: 'vertex/claude-haiku-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] });
    expect(tokens.requests.length).toBe(before + 1);
    expect(refused).toEqual([]);
  });

  it("answers a key the token endpoint refuses with Anthropic's api_error, a 502 naming the channel", async () => {
    writeFileSync(join(dir, 'other.json'), newServiceAccount().keyFile(tokens.tokenUrl));
    const wrong = await startGateway({
      channels: { 'vertex-claude': shipped },
      env: { VERTEX_BASE_URL: vertex.url, GOOGLE_CLOUD_PROJECT: 'test-project', GOOGLE_CLOUD_LOCATION: 'us-east5', GOOGLE_APPLICATION_CREDENTIALS: join(dir, 'other.json') },
      overrides: { now: clock.now },
      listen: true,
    });
    try {
      const sdk = new Anthropic({ apiKey: wrong.key, baseURL: wrong.url, maxRetries: 0 });
      const error = await sdk.messages.create({ model: 'vertex/claude-haiku-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.InternalServerError);
      expect(error).toMatchObject({ status: 502, error: { type: 'error', error: { type: 'api_error', message: 'channel "vertex-claude" could not get an access token: the token endpoint answered 400 (invalid_grant)' } } });
    } finally {
      await wrong.close();
    }
  });
});
