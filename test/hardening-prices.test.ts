// Issue 27, items 3 and 15: a size or quality the price map does not list costs its priciest entry (never 0), at the
// estimate and at settlement, on the image routes and the family task routes; "auto" is accepted and priced the same
// until the upstream reports what it made; a model that declares its sizes refuses any other with 400.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { installImages } from './kit/fake-images.js';
import { installRunwayTasks } from './kit/fake-tasks.js';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { runwayChannel, tasksConfig, waitFor } from './kit/tasks.js';
import { hashApiKey } from '../src/auth/keys.js';
import { findApiKeyByHash } from '../src/store/api-keys.js';

let fake: FakeUpstream;
let gw: TestGateway;

const channel = (url: string) => `id: images
protocol: openai-chat
baseUrl: ${url}/v1
models:
  - id: one-size
    kind: image
    price: { perImage: { "1024x1024": 0.05 } }
  - id: two-sizes
    kind: image
    price: { perImage: { "1024x1024:low": 0.01, "1024x1024:high": 0.02, "1536x1024:high": 0.07 } }
  - id: declared
    kind: image
    media: { sizes: ["1024x1024"] }
    price: { perImage: { "1024x1024": 0.03 } }
`;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  installImages(fake);
  installRunwayTasks(fake);
  // An upstream that reports the size it chose when asked for "auto".
  fake.route((req, res) => {
    if (req.method !== 'POST' || !req.path.endsWith('/images/generations') || req.body?.size !== 'auto') return false;
    json(res, 200, { created: 1, data: [{ url: `${fake.url}/generated/0.png` }], size: '1024x1024', quality: 'low' });
    return true;
  });
  gw = await startGateway({
    channels: { images: channel(fake.url), rw: runwayChannel(fake.url) },
    extraConfig: tasksConfig(fake),
  });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

const generate = (key: string, body: object) => gw.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { authorization: `Bearer ${key}` }, payload: { prompt: 'a lighthouse', ...body } });
const charged = async (key: string) => {
  const id = (await findApiKeyByHash(gw.services.db, hashApiKey(key)))?.id;
  const rows = await gw.services.db.selectFrom('usage_ledger').select('cost_micros').where('key_id', '=', id!).execute();
  return rows.reduce((sum, r) => sum + Number(r.cost_micros), 0);
};

describe('a size the price map does not list is never free (item 3)', () => {
  it('charges 1536x1024 at the priciest entry, so a 0.05 cap admits one image, not twenty', async () => {
    const key = await gw.newKey({ spendCapMicros: 50_000 });
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) statuses.push((await generate(key, { model: 'one-size', size: '1536x1024' })).statusCode);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 402)).toHaveLength(19);
    expect(await charged(key)).toBe(50_000);
  });

  it('prices a quality the map does not list at the priciest entry of the size', async () => {
    const res = await generate(gw.key, { model: 'two-sizes', size: '1024x1024', quality: 'medium' });
    expect(res.statusCode).toBe(200);
    expect(res.json().cost.amount).toBe(0.02);
  });

  it('refuses a size the model does not declare with 400 before any upstream call', async () => {
    const before = fake.requests.length;
    const res = await generate(gw.key, { model: 'declared', size: '1536x1024' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'unsupported_size', param: 'size' });
    expect(fake.requests.length).toBe(before);
  });

  it('reserves and charges a family route size the map does not list at the priciest entry', async () => {
    const key = await gw.newKey({ spendCapMicros: 80_000 });
    const created = await gw.app.inject({ method: 'POST', url: '/api/v1/runway/text_to_image', headers: { authorization: `Bearer ${key}` }, payload: { model: 'gen4-image', prompt: 'p', size: '4000x3000' } });
    expect(created.statusCode).toBe(200);
    const row = await gw.services.db.selectFrom('tasks').select('charge').where('id', '=', created.json().id).executeTakeFirstOrThrow();
    expect(JSON.parse(row.charge).amountMicros).toBe(80_000);
    const refused = await gw.app.inject({ method: 'POST', url: '/api/v1/runway/text_to_image', headers: { authorization: `Bearer ${key}` }, payload: { model: 'gen4-image', prompt: 'p', size: '4000x3000' } });
    expect(refused.statusCode).toBe(402);
    const done = await waitFor(async () => (await gw.app.inject({ method: 'GET', url: `/api/v1/tasks/${created.json().id}`, headers: { authorization: `Bearer ${key}` } })).json(), (t) => t.status === 'completed' || t.status === 'failed');
    expect(done).toMatchObject({ status: 'completed', cost: { amount: 0.08 } });
  });
});

describe('"auto" size and quality (item 15)', () => {
  it('accepts size and quality "auto", reserves the priciest entry and charges what the upstream reports it made', async () => {
    const key = await gw.newKey({ spendCapMicros: 70_000 });
    const res = await generate(key, { model: 'two-sizes', size: 'auto', quality: 'auto' });
    expect(res.statusCode).toBe(200);
    // Reported 1024x1024 low: 0.01, after a reservation of 0.07 (the priciest) that the cap allowed.
    expect(res.json().cost.amount).toBe(0.01);
    expect(await charged(key)).toBe(10_000);
  });

  it('refuses "auto" when the cap does not cover the priciest entry', async () => {
    const key = await gw.newKey({ spendCapMicros: 60_000 });
    expect((await generate(key, { model: 'two-sizes', size: 'auto' })).statusCode).toBe(402);
  });

  it('accepts "auto" on image edits', async () => {
    const { multipart } = await import('./kit/files.js');
    const { png } = await import('./kit/media-samples.js');
    const form = multipart([{ name: 'model', value: 'one-size' }, { name: 'prompt', value: 'p' }, { name: 'size', value: 'auto' }, { name: 'quality', value: 'auto' }, { name: 'image', filename: 'a.png', contentType: 'image/png', value: png(256) }]);
    const res = await gw.app.inject({ method: 'POST', url: '/v1/images/edits', headers: { authorization: `Bearer ${gw.key}`, ...form.headers }, payload: form.payload });
    expect(res.statusCode).toBe(200);
    expect(res.json().cost.amount).toBe(0.05);
    // The image's bytes held against the process-wide budget are let go with the response (issue 27 item 6).
    const { bytesInFlight } = await import('../src/http/bytes-in-flight.js');
    expect(bytesInFlight(gw.services.config.gateway.server.referenceBytesInFlight).held).toBe(0);
  });
});
