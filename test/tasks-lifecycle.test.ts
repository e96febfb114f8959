// Task lifecycles through HTTP: OpenAI's videos, a Runway-shaped protocol and a protocol written in the test, each
// driven to completion or failure against a fake upstream. One gateway serves the file (both vendors' channels and the
// test's protocol on one fake upstream, whose task script each test sets); each test has a workspace and key of its own
// and reads only its own rows, and ends once its tasks have. The two tests that need a tasks config of their own (no
// background poller, a short timeout) start a gateway of their own.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { installOpenAIVideos, installRunwayTasks, type FakeTasks, type TaskScript } from './kit/fake-tasks.js';
import { png } from './kit/media-samples.js';
import { openaiVideoChannel, runwayChannel, tasksConfig, waitFor } from './kit/tasks.js';
import type { Workspace } from '../src/store/workspaces.js';

/** A protocol written for this file: its result comes back as base64 in the status answer. */
const inlineProtocol = `id: inline-tasks
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
const inlineChannel = (baseUrl: string) => `id: inline\nprotocol: inline-tasks\nbaseUrl: ${baseUrl}\nmodels:\n  - id: inline-image\n    kind: image\n    price: { perImage: 0.02 }\n`;
/** Results larger than this are not archived (the two tests of that limit send more; every other result is far less). */
const ARCHIVE_MAX_BYTES = 100_000;

let fake: FakeUpstream;
let shared: TestGateway;
let openai: FakeTasks;
let runway: FakeTasks;
/** A gateway a test started for a config of its own. */
let own: { gw: TestGateway; fake: FakeUpstream } | undefined;
/** The workspaces the current test made (its own, and any other it asked for). */
let workspaces: string[] = [];

beforeAll(async () => {
  fake = await FakeUpstream.start();
  openai = installOpenAIVideos(fake);
  runway = installRunwayTasks(fake);
  shared = await startGateway({
    channels: { openai: openaiVideoChannel(fake.url), runway: runwayChannel(fake.url), 'protocols/inline-tasks.yaml': inlineProtocol, inline: inlineChannel(fake.url) },
    extraConfig: tasksConfig(fake, `  archiveMaxBytes: ${ARCHIVE_MAX_BYTES}\n`),
  });
});
afterAll(async () => {
  await shared?.close();
  await fake?.close();
});
beforeEach(() => {
  fake.reset();
  workspaces = [];
});
afterEach(async () => {
  // A test is over once its tasks are: none of them is polled, archived or billed during the next one.
  if (workspaces.length) await waitFor(() => shared.services.db.selectFrom('tasks').select(['id', 'status']).where('workspace_id', 'in', workspaces).execute(), (rows) => rows.every((t) => t.status === 'completed' || t.status === 'failed'));
  await own?.gw.close();
  await own?.fake.close();
  own = undefined;
});

/** What a test works with: a gateway, the key of a workspace of the test's own, and reads of that workspace's rows. */
interface Tenant {
  gw: TestGateway;
  key: string;
  workspace: Workspace;
  fake: FakeUpstream;
  tasks: FakeTasks;
}

let named = 0;
/** A workspace of the test's own on `gw` (its tasks are waited for when the test ends). */
async function newWorkspace(gw: TestGateway): Promise<Workspace> {
  const workspace = await gw.newWorkspace(`workspace-${++named}`);
  workspaces.push(workspace.id);
  return workspace;
}

/** A workspace and key of the test's own on the shared gateway, the fake's `protocol` tasks following `script`. */
async function start(protocol: 'openai' | 'runway', script: Partial<TaskScript> = {}): Promise<Tenant> {
  const tasks = protocol === 'openai' ? openai : runway;
  tasks.rescript(script);
  const workspace = await newWorkspace(shared);
  return { gw: shared, key: await shared.newKey({ workspace }), workspace, fake, tasks };
}

/** A gateway of the test's own, on the tasks config `extra` adds to (OpenAI's videos only). */
async function startOwn(script: Partial<TaskScript>, extra: string): Promise<Tenant> {
  const ownFake = await FakeUpstream.start();
  const tasks = installOpenAIVideos(ownFake, script);
  const gw = await startGateway({ channels: { tasks: openaiVideoChannel(ownFake.url) }, extraConfig: tasksConfig(ownFake, extra) });
  own = { gw, fake: ownFake };
  return { gw, key: gw.key, workspace: gw.workspace, fake: ownFake, tasks };
}

const post = (t: Tenant, url: string, payload: unknown, key = t.key) => t.gw.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}` }, payload: payload as object });
const get = async (t: Tenant, url: string, key = t.key) => {
  const res = await t.gw.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } });
  return { status: res.statusCode, body: res.json() as Record<string, any> };
};
const finished = (r: { body: Record<string, any> }) => r.body.status === 'completed' || r.body.status === 'failed';

/** Uploads an image to the workspace; answers the file object (with its signed url). */
async function uploadImage(t: Tenant, image: Buffer): Promise<{ id: string; url: string }> {
  const boundary = 'xyzBOUNDARY';
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nvision\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="ref.png"\r\nContent-Type: image/png\r\n\r\n`),
    image,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  const upload = await t.gw.app.inject({ method: 'POST', url: '/v1/files', headers: { authorization: `Bearer ${t.key}`, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload });
  return upload.json();
}

/** The test workspace's ledger rows, reservations and tasks. */
const ledger = (t: Tenant) => t.gw.services.db.selectFrom('usage_ledger').selectAll().where('workspace_id', '=', t.workspace.id).execute();
const heldReservations = (t: Tenant) => t.gw.services.db.selectFrom('spend_reservations').selectAll().where('workspace_id', '=', t.workspace.id).execute();
const taskRows = (t: Tenant) => t.gw.services.db.selectFrom('tasks').selectAll().where('workspace_id', '=', t.workspace.id).execute();

describe('video tasks on the OpenAI protocol', () => {
  it('reserve the worst case at creation, then bill once from the seconds the upstream made', async () => {
    const t = await start('openai', { seconds: '4' });
    const created = await post(t, '/api/v1/videos', { model: 'sora-2', prompt: 'A cat', seconds: 8 });
    expect(created.statusCode).toBe(200);
    const id = created.json().id;
    const row = await t.gw.services.db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(JSON.parse(row.charge).amountMicros).toBe(800_000);
    const done = await waitFor(() => get(t, `/api/v1/videos/${id}`), finished);
    expect(done.body).toMatchObject({ status: 'completed', cost: { amount: 0.4, currency: 'USD' } });
    const rows = await ledger(t);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ model: 'sora-2', kind: 'video', units: 4 });
    expect(Number(rows[0].cost_micros)).toBe(400_000);
    expect(await heldReservations(t)).toHaveLength(0);
    // The archived file names what made it, for the dashboard's Files page.
    const file = await t.gw.services.db.selectFrom('files').selectAll().where('id', '=', done.body.file_id).executeTakeFirstOrThrow();
    expect(file).toMatchObject({ purpose: 'video_generation', source: 'generated', model: 'sora-2', task_id: id });
    // The content is served like any stored file: its length, inline but inert.
    const content = await t.gw.app.inject({ method: 'GET', url: `/api/v1/videos/${id}/content`, headers: { authorization: `Bearer ${t.key}` } });
    expect(content.statusCode).toBe(200);
    expect(content.headers).toMatchObject({ 'content-length': String(file.bytes), 'content-security-policy': 'sandbox', 'x-content-type-options': 'nosniff' });
    expect(content.headers['content-disposition']).toMatch(/^inline; /);
  });

  it('a failed task bills nothing and says why', async () => {
    const t = await start('openai', { outcome: 'failed' });
    const id = (await post(t, '/api/v1/videos', { model: 'sora-2', prompt: 'Something refused' })).json().id;
    const done = await waitFor(() => get(t, `/api/v1/videos/${id}`), finished);
    expect(done.body).toMatchObject({ status: 'failed', error: { code: 'moderation_blocked', message: 'The prompt was refused.' } });
    expect(done.body.cost).toBeUndefined();
    expect(await ledger(t)).toHaveLength(0);
    expect(await heldReservations(t)).toHaveLength(0);
  });

  it('shows progress while the upstream works, and keeps an unknown status word as in_progress', async () => {
    const t = await start('openai', { steps: Array.from({ length: 40 }, (_, i) => 10 + i), runningWord: 'rendering', pollDelayMs: 10 });
    const id = (await post(t, '/api/v1/videos', { model: 'sora-2', prompt: 'Slow' })).json().id;
    const running = await waitFor(() => get(t, `/api/v1/videos/${id}`), (r) => r.body.progress > 0 || finished(r));
    expect(running.body.status).toBe('in_progress');
    expect(running.body.progress).toBeGreaterThanOrEqual(10);
    expect(running.body.progress).toBeLessThan(100);
    const done = await waitFor(() => get(t, `/api/v1/videos/${id}`), finished);
    expect(done.body.status).toBe('completed');
  });

  it('a status request polls a due task at once, with no background poller', async () => {
    const t = await startOwn({ steps: [50] }, '  tickMilliseconds: 600000\n');
    const id = (await post(t, '/api/v1/videos', { model: 'sora-2', prompt: 'Only when asked' })).json().id;
    const done = await waitFor(() => get(t, `/api/v1/videos/${id}`), finished);
    expect(done.body.status).toBe('completed');
    expect([...t.tasks.polls.values()][0]).toBe(2);
  });

  it('a submit the upstream refuses fails the task, is never sent again, and bills nothing', async () => {
    const t = await start('openai');
    t.fake.next({ kind: 'status', status: 400, body: { error: { message: 'Invalid size for this model.' } } }, (r) => r.method === 'POST');
    const id = (await post(t, '/api/v1/videos', { model: 'sora-2', prompt: 'Wrong size', size: '99x99' })).json().id;
    const done = await waitFor(() => get(t, `/api/v1/videos/${id}`), finished);
    expect(done.body).toMatchObject({ status: 'failed', error: { code: 'upstream_rejected' } });
    expect(done.body.error.message).toContain('Invalid size for this model.');
    t.fake.next({ kind: 'status', status: 503 }, (r) => r.method === 'POST');
    const id2 = (await post(t, '/api/v1/videos', { model: 'sora-2', prompt: 'Upstream down' })).json().id;
    expect((await waitFor(() => get(t, `/api/v1/videos/${id2}`), finished)).body.status).toBe('failed');
    expect(t.fake.requests.filter((r) => r.method === 'POST').length).toBe(2);
    expect(t.tasks.creates).toBe(0);
    expect(await ledger(t)).toHaveLength(0);
    expect(await heldReservations(t)).toHaveLength(0);
  });

  it('tolerates 429s, a 503 and a malformed answer from the status endpoint and still completes', async () => {
    const t = await start('openai', { rateLimited: 2 });
    const isPoll = (r: { method: string; path: string }) => r.method === 'GET' && /\/videos\/[^/]+$/.test(r.path);
    t.fake.next({ kind: 'malformed-json' }, isPoll).next({ kind: 'status', status: 503 }, isPoll);
    const id = (await post(t, '/api/v1/videos', { model: 'sora-2', prompt: 'Busy upstream' })).json().id;
    const done = await waitFor(() => get(t, `/api/v1/videos/${id}`), finished);
    expect(done.body.status).toBe('completed');
    expect([...t.tasks.polls.values()][0]).toBeGreaterThan(2);
  });

  it('fails after repeated 404s, billing nothing', async () => {
    const t = await start('openai', { notFound: 100 });
    const id = (await post(t, '/api/v1/videos', { model: 'sora-2', prompt: 'Lost upstream' })).json().id;
    const done = await waitFor(() => get(t, `/api/v1/videos/${id}`), finished);
    expect(done.body).toMatchObject({ status: 'failed', error: { code: 'upstream_not_found' } });
    expect(await ledger(t)).toHaveLength(0);
  });

  it('fails a task past its timeout, billing nothing', async () => {
    const t = await startOwn({ steps: Array(10_000).fill(5) }, '  timeoutSeconds: 0.2\n');
    const id = (await post(t, '/api/v1/videos', { model: 'sora-2', prompt: 'Never ends' })).json().id;
    const done = await waitFor(() => get(t, `/api/v1/videos/${id}`), finished);
    expect(done.body).toMatchObject({ status: 'failed', error: { code: 'task_timeout' } });
    expect(await ledger(t)).toHaveLength(0);
  });

  it('a result over the archive limit, with no provider URL to offer instead, fails the task and bills nothing', async () => {
    const t = await start('openai', { resultBytes: 2 * ARCHIVE_MAX_BYTES, seconds: '4' });
    const id = (await post(t, '/api/v1/videos', { model: 'sora-2', prompt: 'Too big' })).json().id;
    const done = await waitFor(() => get(t, `/api/v1/videos/${id}`), finished);
    expect(done.body).toMatchObject({ status: 'failed', error: { code: 'result_unavailable' } });
    expect(done.body.error.message).toContain(String(ARCHIVE_MAX_BYTES));
    expect(await ledger(t)).toHaveLength(0);
    const content = await t.gw.app.inject({ method: 'GET', url: `/api/v1/videos/${id}/content`, headers: { authorization: `Bearer ${t.key}` } });
    expect(content.statusCode).toBe(409);
  });

  it('sends an input_reference file of the workspace as the image part', async () => {
    const t = await start('openai');
    const image = png(5000);
    const fileId = (await uploadImage(t, image)).id;
    const created = await post(t, '/api/v1/videos', { model: 'sora-2', prompt: 'Animate this', input_reference: fileId });
    expect(created.statusCode).toBe(200);
    await waitFor(async () => t.tasks.creates, (n) => n > 0);
    const sent = t.fake.requests.find((r) => r.method === 'POST' && r.path === '/v1/videos')!;
    expect(sent.raw.includes(image)).toBe(true);
    expect(sent.raw.toString('latin1')).toContain('name="input_reference"; filename="ref.png"');
  });

  it('takes a signed file URL of this gateway as input_reference, and refuses a tampered one with 403', async () => {
    const t = await start('openai');
    const image = png(3000);
    const { url } = await uploadImage(t, image);
    const created = await post(t, '/api/v1/videos', { model: 'sora-2', prompt: 'From a link', input_reference: url });
    expect(created.statusCode).toBe(200);
    await waitFor(async () => t.tasks.creates, (n) => n > 0);
    expect(t.fake.requests.find((r) => r.method === 'POST' && r.path === '/v1/videos')!.raw.includes(image)).toBe(true);
    const tampered = await post(t, '/api/v1/videos', { model: 'sora-2', prompt: 'x', input_reference: url.replace(/token=./, 'token=A') });
    expect(tampered.statusCode).toBe(403);
    const privateUrl = await post(t, '/api/v1/videos', { model: 'sora-2', prompt: 'x', input_reference: 'https://10.0.0.1/a.png' });
    expect(privateUrl.statusCode).toBe(400);
    expect(privateUrl.json().error.param).toBe('input_reference');
    await waitFor(() => get(t, `/api/v1/videos/${created.json().id}`), finished);
  });

  it("answers 404 for another workspace's task and 403 without the videos scope", async () => {
    const t = await start('openai');
    const id = (await post(t, '/api/v1/videos', { model: 'sora-2', prompt: 'Mine' })).json().id;
    const other = await t.gw.newKey({ workspace: await newWorkspace(t.gw) });
    expect((await get(t, `/api/v1/videos/${id}`, other)).status).toBe(404);
    expect((await get(t, `/api/v1/tasks/${id}`, other)).status).toBe(404);
    expect((await get(t, `/api/v1/videos/${id}/content`, other)).status).toBe(404);
    const listed = await get(t, '/api/v1/videos', other);
    expect(listed.body.data).toEqual([]);
    const chatOnly = await t.gw.newKey({ scopes: ['llm.chat'], workspace: t.workspace });
    expect((await post(t, '/api/v1/videos', { model: 'sora-2', prompt: 'x' }, chatOnly)).statusCode).toBe(403);
    expect((await get(t, `/api/v1/tasks/${id}`, chatOnly)).status).toBe(403);
    await waitFor(() => get(t, `/api/v1/videos/${id}`), finished);
  });

  it('refuses more seconds than the model makes, and a request over the cap with 402, leaving no task', async () => {
    const t = await start('openai');
    const tooLong = await post(t, '/api/v1/videos', { model: 'sora-2', prompt: 'x', seconds: 60 });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().error.param).toBe('seconds');
    const capped = await t.gw.newKey({ spendCapMicros: 100_000, workspace: t.workspace });
    const refused = await post(t, '/api/v1/videos', { model: 'sora-2', prompt: 'x', seconds: 8 }, capped);
    expect(refused.statusCode).toBe(402);
    expect(await taskRows(t)).toHaveLength(0);
  });
});

describe('tasks on a Runway-shaped protocol (YAML only)', () => {
  it('a family text_to_image route makes an image.task that completes with an archived image', async () => {
    const t = await start('runway', { steps: [25, 75] });
    const created = await post(t, '/api/v1/runway/text_to_image', { model: 'gen4-image', prompt: 'A lighthouse', size: '1920x1080' });
    expect(created.statusCode).toBe(200);
    expect(created.json()).toMatchObject({ object: 'image.task', status: 'submitting', model: 'gen4-image' });
    const id = created.json().id;
    expect(id).toMatch(/^task_/);
    const seen = new Set<number>();
    const done = await waitFor(() => get(t, `/api/v1/tasks/${id}`), (r) => (seen.add(r.body.progress), finished(r)));
    expect(done.body).toMatchObject({ status: 'completed', archive_status: 'archived', cost: { amount: 0.08, currency: 'USD' } });
    expect([...seen].every((p) => Number.isInteger(p) && p >= 0 && p <= 100)).toBe(true);
    const sent = t.fake.requests.find((r) => r.path === '/v1/text_to_image')!;
    expect(sent.body).toEqual({ model: 'gen4_image', promptText: 'A lighthouse', ratio: '1920:1080' });
    expect(sent.headers['x-runway-version']).toBe('2024-11-06');
    const file = await t.gw.app.inject({ method: 'GET', url: done.body.url.replace(/^https?:\/\/[^/]+/, '') });
    expect(file.statusCode).toBe(200);
    expect(file.headers['content-type']).toBe('image/png');
    // A video.task is not an image task: the videos route does not show it.
    expect((await get(t, `/api/v1/videos/${id}`)).status).toBe(404);
  });

  it('a video model takes a file reference as a signed URL of the gateway, and a failure bills nothing', async () => {
    const t = await start('runway', { outcome: 'failed' });
    const created = await post(t, '/api/v1/videos', { model: 'gen4-video', prompt: 'Waves', seconds: 5, input_reference: 'https://images.example/ref.png' });
    expect(created.statusCode).toBe(200);
    const done = await waitFor(() => get(t, `/api/v1/videos/${created.json().id}`), finished);
    expect(done.body).toMatchObject({ status: 'failed', error: { code: 'SAFETY.INPUT.TEXT', message: 'Content moderation' } });
    const sent = t.fake.requests.find((r) => r.path === '/v1/image_to_video')!;
    expect(sent.body).toEqual({ model: 'gen4_turbo', promptText: 'Waves', promptImage: 'https://images.example/ref.png', duration: 5 });
    expect(await ledger(t)).toHaveLength(0);
  });

  it('a JSON operation gets a workspace file as a signed URL of the gateway', async () => {
    const t = await start('runway');
    const { id: fileId } = await uploadImage(t, png(1000));
    const created = await post(t, '/api/v1/videos', { model: 'gen4-video', prompt: 'Animate', input_reference: fileId });
    expect(created.statusCode).toBe(200);
    await waitFor(() => get(t, `/api/v1/videos/${created.json().id}`), finished);
    const sent = t.fake.requests.find((r) => r.path === '/v1/image_to_video')!;
    expect(sent.body.promptImage).toMatch(new RegExp(`/api/v1/files/${fileId}/content\\?token=`));
  });

  it('a result URL the gateway may not fetch fails the task unbilled, the URL never shown (issue 37 item 3)', async () => {
    const t = await start('runway', { outputUrl: 'https://10.0.0.1/private.png' });
    const id = (await post(t, '/api/v1/runway/text_to_image', { model: 'gen4-image', prompt: 'Hidden', size: '1024x1024' })).json().id;
    const done = await waitFor(() => get(t, `/api/v1/tasks/${id}`), finished);
    expect(done.body).toMatchObject({ status: 'failed', error: { code: 'result_unavailable' } });
    expect(JSON.stringify(done.body)).not.toContain('private.png');
    expect(await ledger(t)).toHaveLength(0);
  });

  it('a result over the archive limit completes with the provider URL', async () => {
    const t = await start('runway', { resultBytes: 2 * ARCHIVE_MAX_BYTES });
    const id = (await post(t, '/api/v1/videos', { model: 'gen4-video', prompt: 'Big' })).json().id;
    const done = await waitFor(() => get(t, `/api/v1/videos/${id}`), finished);
    expect(done.body).toMatchObject({ status: 'completed', archive_status: 'failed', file_id: null });
    expect(done.body.provider_url).toMatch(new RegExp(`^${t.fake.url}/outputs/`));
  });
});

describe('a task API that answers its result as base64 (a protocol written in the test)', () => {
  it('archives the decoded image and charges the reservation when no usage is mapped', async () => {
    const t = await start('openai');
    const image = png(3000);
    let polls = 0;
    // The test's protocol on the shared fake upstream: its paths are no other protocol's.
    t.fake.route((req, res) => {
      if (req.method === 'POST' && req.path === '/jobs') return (json(res, 200, { job: 'j1' }), true);
      if (req.method === 'GET' && req.path === '/jobs/j1') return (json(res, 200, polls++ ? { state: 'done', image: image.toString('base64') } : { state: 'working' }), true);
      return false;
    });
    const created = await post(t, '/api/v1/inline/text_to_image', { model: 'inline-image', prompt: 'A dot' });
    expect(created.statusCode).toBe(200);
    const done = await waitFor(() => get(t, `/api/v1/tasks/${created.json().id}`), finished);
    expect(done.body).toMatchObject({ status: 'completed', archive_status: 'archived', cost: { amount: 0.02 } });
    const file = await t.gw.app.inject({ method: 'GET', url: `/api/v1/files/${done.body.file_id}/content`, headers: { authorization: `Bearer ${t.key}` } });
    expect(file.rawPayload.equals(image)).toBe(true);
  });
});
