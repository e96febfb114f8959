// Image generation through the official openai SDK: every result archived into the workspace, its bytes downloadable, billed per image.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { installImages, type ImageScript } from './kit/fake-images.js';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { issueApiKey } from '../src/auth/keys.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';

let fake: FakeUpstream;
let script: ImageScript;
let gw: TestGateway;
let client: OpenAI;

const channel = (baseUrl: string) => `id: images
protocol: openai-chat
baseUrl: ${baseUrl}
models:
  - id: fake-image
    upstream: upstream-image
    kind: image
    media: { maxImages: 4 }
    price:
      perImage: { "1024x1024:low": 0.01, "1024x1024:high": 0.05, "1536x1024:high": 0.08, default: 0.04 }
`;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  script = installImages(fake);
  const port = new URL(fake.url).port;
  gw = await startGateway({ channels: { images: channel(`${fake.url}/v1`) }, extraConfig: `network:\n  allowHosts: ["127.0.0.1:${port}"]\n`, listen: true });
  client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});
beforeEach(() => fake.reset());

const download = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());

describe('POST /v1/images/generations', () => {
  it('archives URL results: svc_file_id, a signed svc_url with the upstream bytes, the upstream url kept, cost per image', async () => {
    const res = await client.images.generate({ model: 'fake-image', prompt: 'a red fox', size: '1024x1024', quality: 'high', n: 2 });
    expect(fake.requests.find((r) => r.method === 'POST')!.body).toMatchObject({ model: 'upstream-image', prompt: 'a red fox', n: 2 });
    expect(res.data).toHaveLength(2);
    for (const item of res.data!) {
      const archived = item as typeof item & { svc_file_id: string; svc_url: string; archive_status: string };
      expect(archived.archive_status).toBe('archived');
      expect(archived.svc_file_id).toMatch(/^file_/);
      expect(item.url).toMatch(/\/generated\/\d\.png$/);
      expect(await download(archived.svc_url)).toEqual(script.image);
    }
    expect((res as unknown as { cost: unknown }).cost).toEqual({ amount: 0.1, currency: 'USD' });
    const listed = await client.files.list({ purpose: 'image_generation' });
    expect(listed.data.map((f) => f.id)).toEqual(expect.arrayContaining(res.data!.map((d) => (d as unknown as { svc_file_id: string }).svc_file_id)));
  });

  it('archives base64 results too, keeping b64_json', async () => {
    const res = await client.images.generate({ model: 'fake-image', prompt: 'a blue fox', response_format: 'b64_json', size: '1536x1024', quality: 'high' });
    const [item] = res.data! as (NonNullable<typeof res.data>[number] & { svc_url: string; archive_status: string })[];
    expect(item.b64_json).toBe(script.image.toString('base64'));
    expect(item.archive_status).toBe('archived');
    expect(await download(item.svc_url)).toEqual(script.image);
    expect((res as unknown as { cost: unknown }).cost).toEqual({ amount: 0.08, currency: 'USD' });
  });

  it('marks a result whose URL cannot be fetched as failed, keeping the upstream url, and still answers', async () => {
    fake.next({ kind: 'json', body: { created: 1, data: [{ url: `${fake.url}/missing.png` }], size: '1024x1024', quality: 'low' } });
    const res = await gw.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'fake-image', prompt: 'x' } });
    expect(res.statusCode).toBe(200);
    const [item] = res.json().data;
    expect(item).toMatchObject({ url: `${fake.url}/missing.png`, archive_status: 'failed' });
    expect(item.archive_error).toMatch(/404/);
    expect(item.svc_file_id).toBeUndefined();
  });

  it('refuses a result URL on a private address, archiving nothing', async () => {
    fake.next({ kind: 'json', body: { created: 1, data: [{ url: 'https://169.254.169.254/latest/meta-data/' }] } });
    const res = await gw.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'fake-image', prompt: 'x' } });
    expect(res.json().data[0]).toMatchObject({ archive_status: 'failed', archive_error: expect.stringMatching(/linkLocal/) });
  });

  it('admits exactly the images a cap covers, reserving n x the priciest size and quality asked for', async () => {
    // 0.05 per 1024x1024 high image: a 0.10 cap covers two.
    const key = await issueApiKey(gw.services.db, gw.workspace, { spendCapMicros: 100_000 });
    const capped = new OpenAI({ apiKey: key.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
    const first = await capped.images.generate({ model: 'fake-image', prompt: 'one', size: '1024x1024', quality: 'high', n: 2 });
    expect(first.data).toHaveLength(2);
    await expect(capped.images.generate({ model: 'fake-image', prompt: 'two', size: '1024x1024', quality: 'high' })).rejects.toMatchObject({ status: 402 });
    expect(await gw.services.spend.balance('key', key.id, Date.now())).toEqual({ spentMicros: 100_000, reservedMicros: 0 });
  });

  it('records the reported usage and the images in the ledger', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'fake-image', prompt: 'x', size: '1024x1024', quality: 'low', n: 3 } });
    const [row] = await ledgerForRequest(gw.services.db, res.headers['x-request-id'] as string);
    expect(row).toMatchObject({ model: 'fake-image', kind: 'image', units: 3, input_tokens: 10, output_tokens: 100, cost_micros: 30_000 });
  });

  it('refuses n above the model limit, a size it does not know, and a chat model, with 400 before calling the upstream', async () => {
    for (const payload of [{ n: 5 }, { size: '512x512' }, { model: 'nope' }]) {
      const res = await gw.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'fake-image', prompt: 'x', ...payload } });
      expect(res.statusCode).toBe(400);
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('needs the images.generate scope', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace, { scopes: ['llm.chat'] });
    const res = await gw.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { authorization: `Bearer ${key.key}` }, payload: { model: 'fake-image', prompt: 'x' } });
    expect(res.statusCode).toBe(403);
  });
});
