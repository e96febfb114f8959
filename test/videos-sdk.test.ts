import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI, { toFile } from 'openai';
import { png } from './kit/media-samples.js';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { installOpenAIVideos, type FakeTasks } from './kit/fake-tasks.js';
import { openaiVideoChannel, tasksConfig, waitFor } from './kit/tasks.js';

let fake: FakeUpstream;
let videos: FakeTasks;
let gw: TestGateway;
let client: OpenAI;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  videos = installOpenAIVideos(fake, { seconds: '8', resultBytes: 300_000 });
  gw = await startGateway({ channels: { video: openaiVideoChannel(fake.url) }, extraConfig: tasksConfig(fake), listen: true });
  client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/api/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

describe('videos through the official openai SDK', () => {
  it('creates a video task that answers submitting at once and completes with an archived, downloadable file', async () => {
    const created = await client.videos.create({ model: 'sora-2', prompt: 'A cat on a skateboard', seconds: '8', size: '1280x720' });
    expect(created).toMatchObject({ object: 'video.task', status: 'submitting', model: 'sora-2' });
    expect(created.id).toMatch(/^video_[0-9a-f]{28}$/);
    expect(typeof created.created_at).toBe('number');

    const done = await waitFor(() => client.videos.retrieve(created.id), (v) => v.status === 'completed' || v.status === 'failed');
    const task = done as unknown as Record<string, any>;
    expect(task).toMatchObject({ status: 'completed', progress: 100, archive_status: 'archived', cost: { amount: 0.8, currency: 'USD' } });
    expect(task.file_id).toMatch(/^file_/);
    expect(task.provider_url).toBeUndefined();

    // The signed URL needs no key; it is fresh at every status request.
    const bytes = Buffer.from(await (await fetch(task.url)).arrayBuffer());
    expect(bytes.length).toBe(300_000);
    expect(bytes.subarray(4, 8).toString('ascii')).toBe('ftyp');
    const again = (await client.videos.retrieve(created.id)) as unknown as Record<string, any>;
    expect(again.url).toMatch(/\/api\/v1\/files\/file_[0-9a-f]+\/content\?token=/);

    const content = await client.videos.downloadContent(created.id);
    expect(content.headers.get('content-type')).toBe('video/mp4');
    expect((await content.arrayBuffer()).byteLength).toBe(300_000);

    const file = await client.files.retrieve(task.file_id);
    expect(file).toMatchObject({ purpose: 'video_generation', bytes: 300_000, content_type: 'video/mp4' });
  });

  it('sends the upstream the model, prompt, seconds and size as a multipart form', async () => {
    const before = videos.creates;
    await client.videos.create({ model: 'sora-2', prompt: 'Waves at dusk', seconds: '4' });
    await waitFor(async () => videos.creates, (n) => n > before);
    const sent = fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/videos').at(-1)!;
    expect(String(sent.headers['content-type'])).toContain('multipart/form-data');
    const raw = sent.raw.toString('latin1');
    expect(raw).toContain('name="model"\r\n\r\nsora-2');
    expect(raw).toContain('name="prompt"\r\n\r\nWaves at dusk');
    expect(raw).toContain('name="seconds"\r\n\r\n4');
  });

  it('forwards an uploaded input_reference image as the file part the upstream expects', async () => {
    const image = png(4000);
    const before = videos.creates;
    const created = await client.videos.create({ model: 'sora-2', prompt: 'Animate this', input_reference: await toFile(image, 'ref.png', { type: 'image/png' }) });
    expect(created.status).toBe('submitting');
    await waitFor(async () => videos.creates, (n) => n > before);
    const sent = fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/videos').at(-1)!;
    expect(sent.raw.includes(image)).toBe(true);
    expect(sent.raw.toString('latin1')).toContain('name="input_reference"; filename="ref.png"');
  });

  it('lists the workspace videos as a cursor page the SDK can walk', async () => {
    const ids: string[] = [];
    for await (const video of client.videos.list({ limit: 1 })) ids.push(video.id);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('refuses an unknown model with a typed 404 (model_not_found)', async () => {
    await expect(client.videos.create({ model: 'no-such-model', prompt: 'x' })).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
  });
});
