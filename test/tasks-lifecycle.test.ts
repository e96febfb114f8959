import { afterEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { installOpenAIVideos, installRunwayTasks, type TaskScript } from './kit/fake-tasks.js';
import { png } from './kit/media-samples.js';
import { openaiVideoChannel, runwayChannel, tasksConfig, waitFor } from './kit/tasks.js';

let fake: FakeUpstream | undefined;
let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.close();
  await fake?.close();
  gw = fake = undefined;
});

async function start(protocol: 'openai' | 'runway', script: Partial<TaskScript> = {}, extra = '') {
  fake = await FakeUpstream.start();
  const tasks = protocol === 'openai' ? installOpenAIVideos(fake, script) : installRunwayTasks(fake, script);
  gw = await startGateway({ channels: { tasks: protocol === 'openai' ? openaiVideoChannel(fake.url) : runwayChannel(fake.url) }, extraConfig: tasksConfig(fake, extra) });
  return { gw, fake, tasks };
}

const post = (gw: TestGateway, url: string, payload: unknown, key = gw.key) => gw.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}` }, payload: payload as object });
const get = async (gw: TestGateway, url: string, key = gw.key) => {
  const res = await gw.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
  return { status: res.statusCode, body: res.json() as Record<string, any> };
};
const finished = (r: { body: Record<string, any> }) => r.body.status === 'completed' || r.body.status === 'failed';

/** Uploads an image to the workspace; answers the file object (with its signed url). */
async function uploadImage(gw: TestGateway, image: Buffer): Promise<{ id: string; url: string }> {
  const boundary = 'xyzBOUNDARY';
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nvision\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="ref.png"\r\nContent-Type: image/png\r\n\r\n`),
    image,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const upload = await gw.app.inject({ method: 'POST', url: '/v1/files', headers: { authorization: `Bearer ${gw.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload });
  return upload.json();
}

async function ledger(gw: TestGateway) {
  return gw.services.db.selectFrom('usage_ledger').selectAll().execute();
}
async function heldReservations(gw: TestGateway) {
  return gw.services.db.selectFrom('spend_reservations').selectAll().execute();
}

describe('video tasks on the OpenAI protocol', () => {
  it('reserve the worst case at creation, then bill once from the seconds the upstream made', async () => {
    const { gw } = await start('openai', { seconds: '4' });
    const created = await post(gw, '/api/v1/videos', { model: 'sora-2', prompt: 'A cat', seconds: 8 });
    expect(created.statusCode).toBe(200);
    const id = created.json().id;
    const row = await gw.services.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(JSON.parse(row.charge).amountMicros).toBe(800_000);
    const done = await waitFor(() => get(gw, `/api/v1/videos/${id}`), finished);
    expect(done.body).toMatchObject({ status: 'completed', cost: { amount: 0.4, currency: 'USD' } });
    const rows = await ledger(gw);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ model: 'sora-2', kind: 'video', units: 4 });
    expect(Number(rows[0].cost_micros)).toBe(400_000);
    expect(await heldReservations(gw)).toHaveLength(0);
    // The archived file names what made it, for the dashboard's Files page.
    const file = await gw.services.db.selectFrom('files').selectAll().where('id', '=', done.body.file_id).executeTakeFirstOrThrow();
    expect(file).toMatchObject({ purpose: 'video_generation', source: 'generated', model: 'sora-2', task_id: id });
    // The content is served like any stored file: its length, inline but inert.
    const content = await gw.app.inject({ method: 'GET', url: `/api/v1/videos/${id}/content`, headers: { authorization: `Bearer ${gw.key}` } });
    expect(content.statusCode).toBe(200);
    expect(content.headers).toMatchObject({ 'content-length': String(file.bytes), 'content-security-policy': 'sandbox', 'x-content-type-options': 'nosniff' });
    expect(content.headers['content-disposition']).toMatch(/^inline; /);
  });

  it('a failed task bills nothing and says why', async () => {
    const { gw } = await start('openai', { outcome: 'failed' });
    const id = (await post(gw, '/api/v1/videos', { model: 'sora-2', prompt: 'Something refused' })).json().id;
    const done = await waitFor(() => get(gw, `/api/v1/videos/${id}`), finished);
    expect(done.body).toMatchObject({ status: 'failed', error: { code: 'moderation_blocked', message: 'The prompt was refused.' } });
    expect(done.body.cost).toBeUndefined();
    expect(await ledger(gw)).toHaveLength(0);
    expect(await heldReservations(gw)).toHaveLength(0);
  });

  it('shows progress while the upstream works, and keeps an unknown status word as in_progress', async () => {
    const { gw } = await start('openai', { steps: Array.from({ length: 40 }, (_, i) => 10 + i), runningWord: 'rendering', pollDelayMs: 10 });
    const id = (await post(gw, '/api/v1/videos', { model: 'sora-2', prompt: 'Slow' })).json().id;
    const running = await waitFor(() => get(gw, `/api/v1/videos/${id}`), (r) => r.body.progress > 0 || finished(r));
    expect(running.body.status).toBe('in_progress');
    expect(running.body.progress).toBeGreaterThanOrEqual(10);
    expect(running.body.progress).toBeLessThan(100);
    const done = await waitFor(() => get(gw, `/api/v1/videos/${id}`), finished);
    expect(done.body.status).toBe('completed');
  });

  it('a status request polls a due task at once, with no background poller', async () => {
    const { gw, tasks } = await start('openai', { steps: [50] }, '  tickMilliseconds: 600000\n');
    const id = (await post(gw, '/api/v1/videos', { model: 'sora-2', prompt: 'Only when asked' })).json().id;
    const done = await waitFor(() => get(gw, `/api/v1/videos/${id}`), finished);
    expect(done.body.status).toBe('completed');
    expect([...tasks.polls.values()][0]).toBe(2);
  });

  it('a submit the upstream refuses fails the task, is never sent again, and bills nothing', async () => {
    const { gw, fake, tasks } = await start('openai');
    fake.next({ kind: 'status', status: 400, body: { error: { message: 'Invalid size for this model.' } } }, (r) => r.method === 'POST');
    const id = (await post(gw, '/api/v1/videos', { model: 'sora-2', prompt: 'Wrong size', size: '99x99' })).json().id;
    const done = await waitFor(() => get(gw, `/api/v1/videos/${id}`), finished);
    expect(done.body).toMatchObject({ status: 'failed', error: { code: 'upstream_rejected' } });
    expect(done.body.error.message).toContain('Invalid size for this model.');
    fake.next({ kind: 'status', status: 503 }, (r) => r.method === 'POST');
    const id2 = (await post(gw, '/api/v1/videos', { model: 'sora-2', prompt: 'Upstream down' })).json().id;
    expect((await waitFor(() => get(gw, `/api/v1/videos/${id2}`), finished)).body.status).toBe('failed');
    expect(fake.requests.filter((r) => r.method === 'POST').length).toBe(2);
    expect(tasks.creates).toBe(0);
    expect(await ledger(gw)).toHaveLength(0);
    expect(await heldReservations(gw)).toHaveLength(0);
  });

  it('tolerates 429s, a 503 and a malformed answer from the status endpoint and still completes', async () => {
    const { gw, fake, tasks } = await start('openai', { rateLimited: 2 });
    const isPoll = (r: { method: string; path: string }) => r.method === 'GET' && /\/videos\/[^/]+$/.test(r.path);
    fake.next({ kind: 'malformed-json' }, isPoll).next({ kind: 'status', status: 503 }, isPoll);
    const id = (await post(gw, '/api/v1/videos', { model: 'sora-2', prompt: 'Busy upstream' })).json().id;
    const done = await waitFor(() => get(gw, `/api/v1/videos/${id}`), finished);
    expect(done.body.status).toBe('completed');
    expect([...tasks.polls.values()][0]).toBeGreaterThan(2);
  });

  it('fails after repeated 404s, billing nothing', async () => {
    const { gw } = await start('openai', { notFound: 100 });
    const id = (await post(gw, '/api/v1/videos', { model: 'sora-2', prompt: 'Lost upstream' })).json().id;
    const done = await waitFor(() => get(gw, `/api/v1/videos/${id}`), finished);
    expect(done.body).toMatchObject({ status: 'failed', error: { code: 'upstream_not_found' } });
    expect(await ledger(gw)).toHaveLength(0);
  });

  it('fails a task past its timeout, billing nothing', async () => {
    const { gw } = await start('openai', { steps: Array(10_000).fill(5) }, '  timeoutSeconds: 0.2\n');
    const id = (await post(gw, '/api/v1/videos', { model: 'sora-2', prompt: 'Never ends' })).json().id;
    const done = await waitFor(() => get(gw, `/api/v1/videos/${id}`), finished);
    expect(done.body).toMatchObject({ status: 'failed', error: { code: 'task_timeout' } });
    expect(await ledger(gw)).toHaveLength(0);
  });

  it('a result over the archive limit, with no provider URL to offer instead, fails the task and bills nothing', async () => {
    const { gw } = await start('openai', { resultBytes: 200_000, seconds: '4' }, '  archiveMaxBytes: 100000\n');
    const id = (await post(gw, '/api/v1/videos', { model: 'sora-2', prompt: 'Too big' })).json().id;
    const done = await waitFor(() => get(gw, `/api/v1/videos/${id}`), finished);
    expect(done.body).toMatchObject({ status: 'failed', error: { code: 'result_unavailable' } });
    expect(done.body.error.message).toContain('100000');
    expect(await ledger(gw)).toHaveLength(0);
    const content = await gw.app.inject({ method: 'GET', url: `/api/v1/videos/${id}/content`, headers: { authorization: `Bearer ${gw.key}` } });
    expect(content.statusCode).toBe(409);
  });

  it('sends an input_reference file of the workspace as the image part', async () => {
    const { gw, fake, tasks } = await start('openai');
    const image = png(5000);
    const fileId = (await uploadImage(gw, image)).id;
    const created = await post(gw, '/api/v1/videos', { model: 'sora-2', prompt: 'Animate this', input_reference: fileId });
    expect(created.statusCode).toBe(200);
    await waitFor(async () => tasks.creates, (n) => n > 0);
    const sent = fake.requests.find((r) => r.method === 'POST' && r.path === '/v1/videos')!;
    expect(sent.raw.includes(image)).toBe(true);
    expect(sent.raw.toString('latin1')).toContain('name="input_reference"; filename="ref.png"');
  });

  it('takes a signed file URL of this gateway as input_reference, and refuses a tampered one with 403', async () => {
    const { gw, fake, tasks } = await start('openai');
    const image = png(3000);
    const { url } = await uploadImage(gw, image);
    const created = await post(gw, '/api/v1/videos', { model: 'sora-2', prompt: 'From a link', input_reference: url });
    expect(created.statusCode).toBe(200);
    await waitFor(async () => tasks.creates, (n) => n > 0);
    expect(fake.requests.find((r) => r.method === 'POST' && r.path === '/v1/videos')!.raw.includes(image)).toBe(true);
    const tampered = await post(gw, '/api/v1/videos', { model: 'sora-2', prompt: 'x', input_reference: url.replace(/token=./, 'token=A') });
    expect(tampered.statusCode).toBe(403);
    const privateUrl = await post(gw, '/api/v1/videos', { model: 'sora-2', prompt: 'x', input_reference: 'https://10.0.0.1/a.png' });
    expect(privateUrl.statusCode).toBe(400);
    expect(privateUrl.json().error.param).toBe('input_reference');
    await waitFor(() => get(gw, `/api/v1/videos/${created.json().id}`), finished);
  });

  it("answers 404 for another workspace's task and 403 without the videos scope", async () => {
    const { gw } = await start('openai');
    const id = (await post(gw, '/api/v1/videos', { model: 'sora-2', prompt: 'Mine' })).json().id;
    const other = await gw.newKey({ workspace: await gw.newWorkspace('other') });
    expect((await get(gw, `/api/v1/videos/${id}`, other)).status).toBe(404);
    expect((await get(gw, `/api/v1/tasks/${id}`, other)).status).toBe(404);
    expect((await get(gw, `/api/v1/videos/${id}/content`, other)).status).toBe(404);
    const listed = await get(gw, '/api/v1/videos', other);
    expect(listed.body.data).toEqual([]);
    const chatOnly = await gw.newKey({ scopes: ['llm.chat'] });
    expect((await post(gw, '/api/v1/videos', { model: 'sora-2', prompt: 'x' }, chatOnly)).statusCode).toBe(403);
    expect((await get(gw, `/api/v1/tasks/${id}`, chatOnly)).status).toBe(403);
    await waitFor(() => get(gw, `/api/v1/videos/${id}`), finished);
  });

  it('refuses more seconds than the model makes, and a request over the cap with 402, leaving no task', async () => {
    const { gw } = await start('openai');
    const tooLong = await post(gw, '/api/v1/videos', { model: 'sora-2', prompt: 'x', seconds: 60 });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().error.param).toBe('seconds');
    const capped = await gw.newKey({ spendCapMicros: 100_000 });
    const refused = await post(gw, '/api/v1/videos', { model: 'sora-2', prompt: 'x', seconds: 8 }, capped);
    expect(refused.statusCode).toBe(402);
    expect(await gw.services.db.selectFrom('tasks').selectAll().execute()).toHaveLength(0);
  });
});

describe('tasks on a Runway-shaped protocol (YAML only)', () => {
  it('a family text_to_image route makes an image.task that completes with an archived image', async () => {
    const { gw, fake } = await start('runway', { steps: [25, 75] });
    const created = await post(gw, '/api/v1/runway/text_to_image', { model: 'gen4-image', prompt: 'A lighthouse', size: '1920x1080' });
    expect(created.statusCode).toBe(200);
    expect(created.json()).toMatchObject({ object: 'image.task', status: 'submitting', model: 'gen4-image' });
    const id = created.json().id;
    expect(id).toMatch(/^task_/);
    const seen = new Set<number>();
    const done = await waitFor(() => get(gw, `/api/v1/tasks/${id}`), (r) => (seen.add(r.body.progress), finished(r)));
    expect(done.body).toMatchObject({ status: 'completed', archive_status: 'archived', cost: { amount: 0.08, currency: 'USD' } });
    expect([...seen].every((p) => Number.isInteger(p) && p >= 0 && p <= 100)).toBe(true);
    const sent = fake.requests.find((r) => r.path === '/v1/text_to_image')!;
    expect(sent.body).toEqual({ model: 'gen4_image', promptText: 'A lighthouse', ratio: '1920:1080' });
    expect(sent.headers['x-runway-version']).toBe('2024-11-06');
    const file = await gw.app.inject({ method: 'GET', url: done.body.url.replace(/^https?:\/\/[^/]+/, '') });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('image/png');
    // A video.task is not an image task: the videos route does not show it.
    expect((await get(gw, `/api/v1/videos/${id}`)).status).toBe(404);
  });

  it('a video model takes a file reference as a signed URL of the gateway, and a failure bills nothing', async () => {
    const { gw, fake } = await start('runway', { outcome: 'failed' });
    const created = await post(gw, '/api/v1/videos', { model: 'gen4-video', prompt: 'Waves', seconds: 5, input_reference: 'https://images.example/ref.png' });
    expect(created.statusCode).toBe(200);
    const done = await waitFor(() => get(gw, `/api/v1/videos/${created.json().id}`), finished);
    expect(done.body).toMatchObject({ status: 'failed', error: { code: 'SAFETY.INPUT.TEXT', message: 'Content moderation' } });
    const sent = fake.requests.find((r) => r.path === '/v1/image_to_video')!;
    expect(sent.body).toEqual({ model: 'gen4_turbo', promptText: 'Waves', promptImage: 'https://images.example/ref.png', duration: 5 });
    expect(await ledger(gw)).toHaveLength(0);
  });

  it('a JSON operation gets a workspace file as a signed URL of the gateway', async () => {
    const { gw, fake } = await start('runway');
    const { id: fileId } = await uploadImage(gw, png(1000));
    const created = await post(gw, '/api/v1/videos', { model: 'gen4-video', prompt: 'Animate', input_reference: fileId });
    expect(created.statusCode).toBe(200);
    await waitFor(() => get(gw, `/api/v1/videos/${created.json().id}`), finished);
    const sent = fake.requests.find((r) => r.path === '/v1/image_to_video')!;
    expect(sent.body.promptImage).toMatch(new RegExp(`/api/v1/files/${fileId}/content\\?token=`));
  });

  it('a result URL the gateway may not fetch fails the task unbilled, the URL never shown (issue 37 item 3)', async () => {
    const { gw } = await start('runway', { outputUrl: 'https://10.0.0.1/private.png' });
    const id = (await post(gw, '/api/v1/runway/text_to_image', { model: 'gen4-image', prompt: 'Hidden', size: '1024x1024' })).json().id;
    const done = await waitFor(() => get(gw, `/api/v1/tasks/${id}`), finished);
    expect(done.body).toMatchObject({ status: 'failed', error: { code: 'result_unavailable' } });
    expect(JSON.stringify(done.body)).not.toContain('private.png');
    expect(await ledger(gw)).toHaveLength(0);
  });

  it('a result over the archive limit completes with the provider URL', async () => {
    const { gw, fake } = await start('runway', { resultBytes: 50_000 }, '  archiveMaxBytes: 10000\n');
    const id = (await post(gw, '/api/v1/videos', { model: 'gen4-video', prompt: 'Big' })).json().id;
    const done = await waitFor(() => get(gw, `/api/v1/videos/${id}`), finished);
    expect(done.body).toMatchObject({ status: 'completed', archive_status: 'failed', file_id: null });
    expect(done.body.provider_url).toMatch(new RegExp(`^${fake.url}/outputs/`));
  });
});

describe('a task API that answers its result as base64 (a protocol written in the test)', () => {
  const protocol = `id: inline-tasks
dialect: inline-tasks
operations:
  create: { path: /jobs }
  job: { method: GET, path: "/jobs/{{ upstream_id }}", encoding: none }
tasks:
  image:
    kind: image
    route: /v1/inline/text_to_image
    submit: { operation: create, request: { prompt: "{{ body.prompt }}" }, id: "{{ answer.job }}" }
    poll: { operation: job, status: "{{ answer.state }}", statusMap: { working: in_progress, done: completed, failed: failed } }
    result: { base64: "{{ answer.image }}" }
`;

  it('archives the decoded image and charges the reservation when no usage is mapped', async () => {
    fake = await FakeUpstream.start();
    const image = png(3000);
    let polls = 0;
    fake.route((req, res) => {
      if (req.method === 'POST' && req.path === '/jobs') return (json(res, 200, { job: 'j1' }), true);
      if (req.method === 'GET' && req.path === '/jobs/j1') return (json(res, 200, polls++ ? { state: 'done', image: image.toString('base64') } : { state: 'working' }), true);
      return false;
    });
    const channel = `id: inline\nprotocol: inline-tasks\nbaseUrl: ${fake.url}\nmodels:\n  - id: inline-image\n    kind: image\n    price: { perImage: 0.02 }\n`;
    gw = await startGateway({ channels: { 'protocols/inline-tasks.yaml': protocol, inline: channel }, extraConfig: tasksConfig(fake) });
    const created = await post(gw, '/api/v1/inline/text_to_image', { model: 'inline-image', prompt: 'A dot' });
    expect(created.statusCode).toBe(200);
    const done = await waitFor(() => get(gw!, `/api/v1/tasks/${created.json().id}`), finished);
    expect(done.body).toMatchObject({ status: 'completed', archive_status: 'archived', cost: { amount: 0.02 } });
    const file = await gw.app.inject({ method: 'GET', url: `/api/v1/files/${done.body.file_id}/content`, headers: { authorization: `Bearer ${gw.key}` } });
    expect(file.rawPayload.equals(image)).toBe(true);
  });
});
