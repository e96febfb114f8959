// The shipped channels/azure-openai.yaml through the official openai SDK, against a fake Azure OpenAI v1 API on 127.0.0.1
// that enforces the platform's authentication: the `api-key` header (and no Authorization), or an Entra ID token issued
// by a fake Entra token endpoint (and no api-key) that is refused once expired.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerForRequest } from '../src/store/usage-ledger.js';
import { entraTokenEndpoint, testClock, type FakeTokenEndpoint } from './kit/fake-cloud-auth.js';
import { installImages } from './kit/fake-images.js';
import { installResponses } from './kit/fake-responses.js';
import { FakeUpstream, json, type RecordedRequest } from './kit/fake-upstream.js';
import { repoRoot, startGateway, type TestGateway } from './kit/gateway.js';
import { captureLogs } from './kit/log-capture.js';

const shipped = readFileSync(join(repoRoot, 'channels', 'azure-openai.yaml'), 'utf8');
/** An image deployment an operator adds (the shipped file lists none): per image by size and quality. */
const withImages = `${shipped}  - id: azure/my-image
    upstream: my-image-deployment
    kind: image
    price: { perImage: { "1024x1024:low": 0.011 } }
`;
const API_KEY = 'azure-api-key-0123456789abcdef';
const CLIENT_SECRET = 'entra-secret-value-of-the-app';
const SCOPE = 'https://cognitiveservices.azure.com/.default';
const clock = testClock();

/**
 * A fake Azure OpenAI resource: the OpenAI routes under /openai/v1 (chat from the fake upstream, Responses, images, and
 * embeddings here), each request first checked by `authorized` (answering 401 as Azure does when it is not).
 */
async function fakeAzure(authorized: (req: RecordedRequest) => boolean): Promise<{ fake: FakeUpstream; refused: RecordedRequest[] }> {
  const fake = await FakeUpstream.start();
  const refused: RecordedRequest[] = [];
  installResponses(fake);
  installImages(fake);
  fake.route((req, res) => {
    if (req.method !== 'POST' || req.path !== '/openai/v1/embeddings') return false;
    const inputs = Array.isArray(req.body.input) ? req.body.input : [req.body.input];
    json(res, 200, { object: 'list', model: req.body.model, data: inputs.map((_: unknown, index: number) => ({ object: 'embedding', index, embedding: [0.1, 0.2, 0.3] })), usage: { prompt_tokens: 5, total_tokens: 5 } });
    return true;
  });
  fake.route((req, res) => {
    if (!req.path.startsWith('/openai/v1/')) {
      json(res, 404, { error: { code: '404', message: 'Resource not found' } });
      return true;
    }
    if (authorized(req)) return false;
    refused.push(req);
    json(res, 401, { error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint.' } });
    return true;
  });
  return { fake, refused };
}

describe('azure-openai with an API key', () => {
  let azure: Awaited<ReturnType<typeof fakeAzure>>;
  let gw: TestGateway;
  let client: OpenAI;

  beforeAll(async () => {
    azure = await fakeAzure((req) => req.headers['api-key'] === API_KEY && req.headers.authorization === undefined);
    // A trailing slash on the endpoint, as the Azure portal shows it.
    gw = await startGateway({ channels: { 'azure-openai': withImages }, env: { AZURE_OPENAI_ENDPOINT: `${azure.fake.url}/`, AZURE_OPENAI_API_KEY: API_KEY }, listen: true });
    client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
    await azure.fake.close();
  });

  it('answers chat with the client model id, the deployment named upstream, billed at the shipped price', async () => {
    azure.fake.reset();
    const { data, response } = await client.chat.completions.create({ model: 'azure/gpt-4.1', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(data.model).toBe('azure/gpt-4.1');
    expect(data.choices[0].message.content).toBe('Hello from the fake upstream.');
    expect(azure.fake.last).toMatchObject({ path: '/openai/v1/chat/completions', body: { model: 'gpt-4.1' } });
    expect(azure.refused).toEqual([]);
    // 12 input tokens at $2.00/M and 7 output at $8.00/M.
    expect((data as unknown as { cost: unknown }).cost).toEqual({ amount: 0.00008, currency: 'USD' });
    const ledger = await ledgerForRequest(gw.services.db, response.headers.get('x-request-id')!);
    expect(ledger[0]).toMatchObject({ model: 'azure/gpt-4.1', input_tokens: 12, output_tokens: 7, cost_micros: 80 });
  });

  it('streams chat', async () => {
    const stream = await client.chat.completions.create({ model: 'azure/gpt-5-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      expect(chunk.model).toBe('azure/gpt-5-mini');
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe('Hello from the fake upstream.');
    expect(usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 7 });
    expect(azure.fake.last).toMatchObject({ path: '/openai/v1/chat/completions', body: { model: 'gpt-5-mini', stream: true } });
    expect(azure.refused).toEqual([]);
  });

  it('relays Responses, embeddings and image generation at their v1 paths', async () => {
    const response = await client.responses.create({ model: 'azure/gpt-5', input: 'hi' });
    expect(response.model).toBe('azure/gpt-5');
    expect(azure.fake.last).toMatchObject({ path: '/openai/v1/responses', body: { model: 'gpt-5' } });
    const embeddings = await client.embeddings.create({ model: 'azure/text-embedding-3-small', input: ['a', 'b'] });
    expect(embeddings.data).toHaveLength(2);
    expect(azure.fake.last).toMatchObject({ path: '/openai/v1/embeddings', body: { model: 'text-embedding-3-small' } });
    const image = (await client.images.generate({ model: 'azure/my-image', prompt: 'a lighthouse', size: '1024x1024', quality: 'low', response_format: 'b64_json' })) as OpenAI.ImagesResponse;
    expect(image.data).toHaveLength(1);
    expect(azure.fake.last).toMatchObject({ path: '/openai/v1/images/generations', body: { model: 'my-image-deployment' } });
    expect(azure.refused).toEqual([]);
  });

  it('answers a key Azure refuses with a typed 502 naming the channel and never the key', async () => {
    const wrong = await startGateway({ channels: { 'azure-openai': shipped }, env: { AZURE_OPENAI_ENDPOINT: azure.fake.url, AZURE_OPENAI_API_KEY: 'a-wrong-key-value' } });
    try {
      const res = await wrong.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${wrong.key}` }, payload: { model: 'azure/gpt-4.1', messages: [{ role: 'user', content: 'hi' }] } });
      expect(res.statusCode).toBe(502);
      expect(res.json().error).toMatchObject({ code: 'upstream_auth_failed', message: 'channel "azure-openai" refused the gateway\'s credentials' });
      expect(res.body).not.toContain('a-wrong-key-value');
    } finally {
      await wrong.close();
    }
  });
});

describe('azure-openai with a Microsoft Entra ID application', () => {
  let tokens: FakeTokenEndpoint;
  let azure: Awaited<ReturnType<typeof fakeAzure>>;
  let gw: TestGateway;
  let client: OpenAI;
  const logs = captureLogs('debug');

  beforeAll(async () => {
    tokens = await entraTokenEndpoint({ tenant: 'contoso-tenant', clientId: 'gateway-app', clientSecret: CLIENT_SECRET, scope: SCOPE, clock });
    azure = await fakeAzure((req) => tokens.accepts(req.headers.authorization) && req.headers['api-key'] === undefined);
    gw = await startGateway({
      channels: { 'azure-openai': shipped },
      // The authority with a trailing slash, as the Azure Identity libraries spell their default.
      env: { AZURE_OPENAI_ENDPOINT: azure.fake.url, AZURE_AUTHORITY_HOST: `${tokens.url}/`, AZURE_TENANT_ID: 'contoso-tenant', AZURE_CLIENT_ID: 'gateway-app', AZURE_CLIENT_SECRET: CLIENT_SECRET },
      overrides: { now: clock.now },
      logger: logs.logger,
      listen: true,
    });
    client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
    await azure.fake.close();
    await tokens.close();
  });

  it('sends an Entra token for the Cognitive Services scope as a bearer, reused within its lifetime and renewed after it', async () => {
    tokens.requests.length = 0;
    const first = await client.chat.completions.create({ model: 'azure/gpt-4.1-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(first.model).toBe('azure/gpt-4.1-mini');
    const stream = await client.chat.completions.create({ model: 'azure/gpt-4.1-mini', messages: [{ role: 'user', content: 'hi' }], stream: true });
    for await (const chunk of stream) expect(chunk.model).toBe('azure/gpt-4.1-mini');
    expect(tokens.requests).toHaveLength(1);
    expect(Object.fromEntries(tokens.requests[0])).toEqual({ grant_type: 'client_credentials', client_id: 'gateway-app', client_secret: CLIENT_SECRET, scope: SCOPE });
    clock.advance(tokens.lifetimeSeconds * 1000);
    await client.chat.completions.create({ model: 'azure/gpt-4.1-mini', messages: [{ role: 'user', content: 'hi' }] });
    expect(tokens.requests).toHaveLength(2);
    expect(azure.refused).toEqual([]);
    expect(azure.fake.requests.every((r) => r.headers['api-key'] === undefined)).toBe(true);
    const seen = JSON.stringify(logs.lines);
    for (const secret of [CLIENT_SECRET, ...tokens.tokens()]) expect(seen).not.toContain(secret);
  });

  it('answers a refused client secret with a typed 502 naming the channel, through the SDK', async () => {
    const wrong = await startGateway({
      channels: { 'azure-openai': shipped },
      env: { AZURE_OPENAI_ENDPOINT: azure.fake.url, AZURE_AUTHORITY_HOST: tokens.url, AZURE_TENANT_ID: 'contoso-tenant', AZURE_CLIENT_ID: 'gateway-app', AZURE_CLIENT_SECRET: 'not-the-secret' },
      listen: true,
    });
    try {
      const sdk = new OpenAI({ apiKey: wrong.key, baseURL: `${wrong.url}/v1`, maxRetries: 0 });
      const error = await sdk.chat.completions.create({ model: 'azure/gpt-4.1', messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      expect(error).toMatchObject({ status: 502, code: 'upstream_auth_failed' });
      expect((error as Error).message).toContain('channel "azure-openai" could not get an access token: the token endpoint answered 401 (invalid_client)');
      expect((error as Error).message).not.toContain('not-the-secret');
    } finally {
      await wrong.close();
    }
  });
});

describe('azure-openai settings', () => {
  const load = async (env: NodeJS.ProcessEnv) => {
    const gw = await startGateway({ channels: { 'azure-openai': shipped }, env: { AZURE_OPENAI_ENDPOINT: '', AZURE_OPENAI_API_KEY: '', AZURE_TENANT_ID: '', AZURE_CLIENT_ID: '', AZURE_CLIENT_SECRET: '', ...env } });
    const channel = gw.services.config.channels.find((c) => c.id === 'azure-openai')!;
    const result = { disabledReason: channel.disabledReason, kind: channel.auth?.kind };
    await gw.close();
    return result;
  };

  it('stays disabled until its endpoint and one set of credentials are set, naming what is missing', async () => {
    expect(await load({ AZURE_OPENAI_API_KEY: 'k' })).toEqual({ disabledReason: 'channel "azure-openai" is disabled: environment variable AZURE_OPENAI_ENDPOINT is not set', kind: undefined });
    expect(await load({ AZURE_OPENAI_ENDPOINT: 'https://r.openai.azure.com', AZURE_TENANT_ID: 't' })).toEqual({
      disabledReason: 'channel "azure-openai" is disabled: none of its credentials has its variables set (set AZURE_OPENAI_API_KEY; or AZURE_CLIENT_ID, AZURE_CLIENT_SECRET)',
      kind: undefined,
    });
  });

  it('uses the API key when it is set, else the Entra application', async () => {
    const entra = { AZURE_TENANT_ID: 't', AZURE_CLIENT_ID: 'c', AZURE_CLIENT_SECRET: 's' };
    expect(await load({ AZURE_OPENAI_ENDPOINT: 'https://r.openai.azure.com', ...entra })).toEqual({ disabledReason: undefined, kind: 'oauth2-client-credentials' });
    expect(await load({ AZURE_OPENAI_ENDPOINT: 'https://r.openai.azure.com', AZURE_OPENAI_API_KEY: 'k', ...entra })).toEqual({ disabledReason: undefined, kind: 'static' });
  });
});
