// The Google image protocols (Imagen `:predict`, Gemini image `:generateContent`) through the official openai SDK: the
// OpenAI images request is translated by the protocol's data, the base64 results archived, the answer billed per image.
// Gemini image runs on the shipped channel file; Imagen on a channel of the test's own, since no Imagen model is served
// any more (Google shut down imagen-4.0-* on 2026-08-17, so channels/google-imagen.yaml is gone): its model ids are the
// test's, priced like the last Imagen tiers ($0.04 standard, $0.02 fast).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { png } from './kit/media-samples.js';
import { repoRoot, startGateway, type TestGateway } from './kit/gateway.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';

const image = png(64);
const b64 = image.toString('base64');
/** A shipped channel file with its base URL moved to the fake. */
const shipped = (file: string, baseUrl: string) => readFileSync(join(repoRoot, 'channels', file), 'utf8').replace(/^baseUrl: .*$/m, `baseUrl: ${baseUrl}`);
const imagenChannel = (baseUrl: string) => `id: imagen-test
protocol: google-imagen
baseUrl: ${baseUrl}
credential: { env: GEMINI_API_KEY }
models:
  - { id: imagen-standard, kind: image, media: { maxImages: 4, sizes: ["1024x1024", "1792x1024", "1024x1792"] }, price: { perImage: 0.04 } }
  - { id: imagen-fast, kind: image, media: { maxImages: 4, sizes: ["1024x1024", "1792x1024", "1024x1792"] }, price: { perImage: 0.02 } }
`;

let fake: FakeUpstream;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  const base = `${fake.url}/v1beta`;
  gw = await startGateway({
    channels: { 'imagen-test.yaml': imagenChannel(base), 'gemini-image.yaml': shipped('gemini-image.yaml', base) },
    env: { GEMINI_API_KEY: 'key-gemini' },
    listen: true,
  });
  client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const download = async (url: string) => Buffer.from(await (await fetch(url)).arrayBuffer());
type Archived = { b64_json: string; svc_file_id: string; svc_url: string; archive_status: string };

describe('Imagen through POST /v1/images/generations', () => {
  it('sends predict with sampleCount and the aspect ratio, archives each image and bills it per image', async () => {
    fake.next({ kind: 'json', body: { predictions: [{ bytesBase64Encoded: b64, mimeType: 'image/png' }, { bytesBase64Encoded: b64, mimeType: 'image/png' }] } });
    const res = await client.images.generate({ model: 'imagen-standard', prompt: 'a red fox', n: 2, size: '1792x1024' });
    const sent = fake.last!;
    expect(sent.path).toBe('/v1beta/models/imagen-standard:predict');
    expect(sent.headers['x-goog-api-key']).toBe('key-gemini');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toEqual({ instances: [{ prompt: 'a red fox' }], parameters: { sampleCount: 2, aspectRatio: '16:9' } });
    expect(res.data).toHaveLength(2);
    for (const item of res.data as unknown as Archived[]) {
      expect(item.b64_json).toBe(b64);
      expect(item.archive_status).toBe('archived');
      expect(item.svc_file_id).toMatch(/^file_/);
      expect(await download(item.svc_url)).toEqual(image);
    }
    expect((res as unknown as { cost: unknown }).cost).toEqual({ amount: 0.08, currency: 'USD' });
  });

  it('bills only the images Imagen made when its filter left one out', async () => {
    fake.next({ kind: 'json', body: { predictions: [{ bytesBase64Encoded: b64, mimeType: 'image/png' }] } });
    const res = await gw.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'imagen-fast', prompt: 'x', n: 3 } });
    expect(res.statusCode).toBe(200);
    expect(fake.last!.body.parameters).toEqual({ sampleCount: 3 });
    expect(res.json().data).toHaveLength(1);
    const [row] = await ledgerForRequest(gw.services.db, res.headers['x-request-id'] as string);
    expect(row).toMatchObject({ model: 'imagen-fast', kind: 'image', units: 1, cost_micros: 20_000 });
  });

  it('refuses with 400 naming the field what Imagen cannot do, before any upstream call', async () => {
    const before = fake.requests.length;
    const quality = await client.images.generate({ model: 'imagen-standard', prompt: 'x', quality: 'high' }).catch((e: unknown) => e);
    expect(quality).toMatchObject({ status: 400, param: 'quality' });
    const size = await client.images.generate({ model: 'imagen-standard', prompt: 'x', size: '1536x1024' }).catch((e: unknown) => e);
    expect(size).toMatchObject({ status: 400, param: 'size' });
    expect(fake.requests.length).toBe(before);
  });
});

describe('Gemini image models through POST /v1/images/generations', () => {
  it('sends generateContent for an image, archives the inline image and bills the image and the prompt tokens', async () => {
    fake.next({
      kind: 'json',
      body: {
        candidates: [{ content: { role: 'model', parts: [{ text: 'Here it is.' }, { inlineData: { mimeType: 'image/png', data: b64 } }] }, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 6, candidatesTokenCount: 1120, totalTokenCount: 1126 },
      },
    });
    const res = await client.images.generate({ model: 'gemini-nano-banana-2.1', prompt: 'a red fox', size: '1536x1024' });
    const sent = fake.last!;
    expect(sent.path).toBe('/v1beta/models/gemini-nano-banana-2.1:generateContent');
    expect(sent.body).toEqual({ contents: [{ role: 'user', parts: [{ text: 'a red fox' }] }], generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '3:2' } } });
    const [item] = res.data as unknown as Archived[];
    expect(res.data).toHaveLength(1);
    expect(item.archive_status).toBe('archived');
    expect(await download(item.svc_url)).toEqual(image);
    // $0.0336 per image + 6 prompt tokens at $1.50 per million (9 micros).
    expect((res as unknown as { cost: unknown }).cost).toEqual({ amount: 0.033609, currency: 'USD' });
  });

  it('answers no images when the safety filter blocked it, charged only the prompt', async () => {
    fake.next({ kind: 'json', body: { candidates: [{ finishReason: 'IMAGE_SAFETY' }], usageMetadata: { promptTokenCount: 10, totalTokenCount: 10 } } });
    const res = await gw.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'gemini-nano-banana-2.1', prompt: 'x' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([]);
    expect(res.json().cost).toEqual({ amount: 0.000015, currency: 'USD' });
  });

  it('refuses more than one image with 400', async () => {
    const err = await client.images.generate({ model: 'gemini-nano-banana-2.1', prompt: 'x', n: 2 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, param: 'n' });
  });
});
