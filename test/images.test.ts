// Image generation through the official openai SDK: every result archived into the workspace, its bytes downloadable, billed per image.
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { installImages, type ImageScript } from './kit/fake-images.js';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { issueApiKey } from '../src/auth/keys.js';
import { ledgerForRequest } from '../src/store/usage-ledger.js';
import { png } from './kit/media-samples.js';
import { multipart } from './kit/files.js';

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
    // Every result carries all three archive fields, null when absent (issue 27 item 12).
    expect(item).toMatchObject({ svc_file_id: null, svc_url: null });
  });

  it('refuses a result URL on a private address, archiving nothing', async () => {
    fake.next({ kind: 'json', body: { created: 1, data: [{ url: 'https://169.254.169.254/latest/meta-data/' }] } });
    const res = await gw.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'fake-image', prompt: 'x' } });
    expect(res.json().data[0]).toMatchObject({ archive_status: 'failed', svc_file_id: null, svc_url: null, archive_error: expect.stringMatching(/linkLocal/) });
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

  it('refuses n above the model limit and a size it does not know with 400, an unknown model with 404, before calling the upstream', async () => {
    for (const [payload, status] of [[{ n: 5 }, 400], [{ size: '640x480' }, 400], [{ model: 'nope' }, 404]] as const) {
      const res = await gw.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'fake-image', prompt: 'x', ...payload } });
      expect(res.statusCode).toBe(status);
    }
    expect(fake.requests).toHaveLength(0);
  });

  it('needs the images.generate scope', async () => {
    const key = await issueApiKey(gw.services.db, gw.workspace, { scopes: ['llm.chat'] });
    const res = await gw.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { authorization: `Bearer ${key.key}` }, payload: { model: 'fake-image', prompt: 'x' } });
    expect(res.statusCode).toBe(403);
  });
});

describe('POST /v1/images/edits', () => {
  const editRequest = () => fake.requests.find((r) => r.path.endsWith('/images/edits'))!;
  /** The file parts the upstream received: field name, file name and bytes. */
  const fileParts = (raw: Buffer) => {
    const text = raw.toString('latin1');
    return [...text.matchAll(/name="([^"]+)"; filename="([^"]*)"\r\nContent-Type: ([^\r]+)\r\n\r\n/g)].map((m) => ({ field: m[1], filename: m[2], type: m[3] }));
  };

  it('sends one image file through the official SDK and archives the result', async () => {
    const res = await client.images.edit({ model: 'fake-image', prompt: 'add a hat', image: await OpenAI.toFile(png(64), 'cat.png', { type: 'image/png' }), size: '1024x1024', quality: 'low' });
    const sent = editRequest();
    expect(sent.headers['content-type']).toMatch(/^multipart\/form-data/);
    expect(fileParts(sent.raw)).toEqual([{ field: 'image', filename: 'cat.png', type: 'image/png' }]);
    expect(sent.raw.toString('latin1')).toContain('name="model"\r\n\r\nupstream-image\r\n');
    const [item] = res.data! as unknown as { svc_url: string; archive_status: string }[];
    expect(item.archive_status).toBe('archived');
    expect(await download(item.svc_url)).toEqual(script.image);
    expect((res as unknown as { cost: unknown }).cost).toEqual({ amount: 0.01, currency: 'USD' });
  });

  it('forwards two images and a mask, every part reaching the upstream', async () => {
    const image = [await OpenAI.toFile(png(64), 'a.png', { type: 'image/png' }), await OpenAI.toFile(png(128), 'b.png', { type: 'image/png' })];
    await client.images.edit({ model: 'fake-image', prompt: 'merge', image, mask: await OpenAI.toFile(png(32), 'mask.png', { type: 'image/png' }) });
    expect(fileParts(editRequest().raw)).toEqual([
      { field: 'image[]', filename: 'a.png', type: 'image/png' },
      { field: 'image[]', filename: 'b.png', type: 'image/png' },
      { field: 'mask', filename: 'mask.png', type: 'image/png' },
    ]);
  });

  it('takes image_url references: a file of the workspace and an https URL through the SSRF guard', async () => {
    const uploaded = await client.files.create({ file: await OpenAI.toFile(png(256), 'ref.png', { type: 'image/png' }), purpose: 'vision' });
    const form = multipart([
      { name: 'model', value: 'fake-image' },
      { name: 'prompt', value: 'combine' },
      { name: 'image_url', value: uploaded.id },
      { name: 'image_url', value: `${fake.url}/generated/0.png` },
    ]);
    const res = await gw.app.inject({ method: 'POST', url: '/v1/images/edits', headers: { authorization: `Bearer ${gw.key}`, ...form.headers }, payload: form.payload });
    expect(res.statusCode).toBe(200);
    const parts = fileParts(editRequest().raw);
    expect(parts.map((p) => p.field)).toEqual(['image[]', 'image[]']);
    expect(editRequest().raw.includes(png(256))).toBe(true);
    expect(editRequest().raw.includes(script.image)).toBe(true);
  });

  it('answers 404 for another workspace\'s file id and 400 for a private URL, before calling the upstream', async () => {
    const other = await gw.newWorkspace('elsewhere');
    const otherKey = await gw.newKey({ workspace: other });
    const foreign = await new OpenAI({ apiKey: otherKey, baseURL: `${gw.url}/api/v1` }).files.create({ file: await OpenAI.toFile(png(), 'x.png', { type: 'image/png' }), purpose: 'vision' });
    for (const [reference, status] of [[foreign.id, 404], ['https://10.0.0.1/x.png', 400], ['http://example.com/x.png', 400]] as const) {
      const form = multipart([{ name: 'model', value: 'fake-image' }, { name: 'prompt', value: 'p' }, { name: 'image_url', value: reference }]);
      const res = await gw.app.inject({ method: 'POST', url: '/v1/images/edits', headers: { authorization: `Bearer ${gw.key}`, ...form.headers }, payload: form.payload });
      expect(res.statusCode).toBe(status);
    }
    expect(fake.requests.filter((r) => r.path.endsWith('/images/edits'))).toHaveLength(0);
  });

  it('refuses a file that is not an image (415), no image at all (400), and more than 25 MiB in all (413)', async () => {
    const post = (parts: Parameters<typeof multipart>[0]) => {
      const form = multipart([{ name: 'model', value: 'fake-image' }, { name: 'prompt', value: 'p' }, ...parts]);
      return gw.app.inject({ method: 'POST', url: '/v1/images/edits', headers: { authorization: `Bearer ${gw.key}`, ...form.headers }, payload: form.payload });
    };
    expect((await post([{ name: 'image', value: Buffer.from('%PDF-1.4 not an image'), filename: 'x.png', contentType: 'image/png' }])).statusCode).toBe(415);
    expect((await post([])).statusCode).toBe(400);
    const half = png(13 * 1024 * 1024);
    expect((await post([{ name: 'image[]', value: half, filename: 'a.png' }, { name: 'image[]', value: half, filename: 'b.png' }])).statusCode).toBe(413);
    expect(fake.requests.filter((r) => r.path.endsWith('/images/edits'))).toHaveLength(0);
  });
});
