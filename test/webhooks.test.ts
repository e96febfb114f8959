// Task webhooks through HTTP: video tasks driven to completion and to failure against the fake upstream deliver signed
// Standard Webhooks events to a receiver on 127.0.0.1, verified with the `standardwebhooks` package (an independent
// implementation); retries with back-off; the SSRF guard at delivery; a restart resumes pending deliveries; two apps on
// one database send each attempt once. One gateway, fake upstream and receiver serve the tests on the default webhook
// config, each test in a workspace of its own (its endpoints, tasks and deliveries) and over only once its deliveries
// are; a test of another webhook config, or of a second app on the database, starts a gateway of its own.
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newAdminToken } from '../src/admin/auth.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/compile/load-config.js';
import { createServices } from '../src/services.js';
import type { Workspace } from '../src/store/workspaces.js';
import { dueDeliveryIds } from '../src/webhooks/store.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { installOpenAIVideos, installRunwayTasks, type FakeTasks, type TaskScript } from './kit/fake-tasks.js';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { openaiVideoChannel, runwayChannel, waitFor } from './kit/tasks.js';
import { WebhookReceiver } from './kit/webhook-receiver.js';

const admin = newAdminToken();
/** Fast ticks and a short retry schedule: the webhook config of the shared gateway. */
const DEFAULT_WEBHOOKS = '  tickMilliseconds: 10\n  retrySeconds: [0.2, 0.3]\n  maxAttempts: 3\n';

interface Rig {
  gw: TestGateway;
  fake: FakeUpstream;
  receiver: WebhookReceiver;
  openai: FakeTasks;
  runway: FakeTasks;
}

/** A gateway with a fake upstream (both task protocols) and a receiver, both allowed on loopback, on the webhook config `webhooks`. */
async function startRig(webhooks: string): Promise<Rig> {
  const fake = await FakeUpstream.start();
  const receiver = await WebhookReceiver.start();
  const openai = installOpenAIVideos(fake);
  const runway = installRunwayTasks(fake);
  const extraConfig = [
    'tasks:\n  tickMilliseconds: 10\n  leaseSeconds: 1\n  poll: { firstSeconds: 0.01, maxSeconds: 0.03 }\n',
    `network:\n  allowHosts: ["${new URL(fake.url).host}", "${receiver.host}"]\n`,
    `webhooks:\n${webhooks}`,
    `admin:\n  tokens:\n    - id: ops\n      sha256: ${admin.sha256}\n`,
  ].join('');
  const gw = await startGateway({ channels: { openai: openaiVideoChannel(fake.url), runway: runwayChannel(fake.url) }, extraConfig, serverConfig: '  publicUrl: https://gateway.example.com\n' });
  return { gw, fake, receiver, openai, runway };
}

async function closeRig(rig: Rig | undefined): Promise<void> {
  await rig?.gw.close();
  await rig?.fake.close();
  await rig?.receiver.close();
}

let shared: Rig;
/** A gateway a test started for a config of its own, and apps it added on the same database. */
let own: Rig | undefined;
const extraApps: FastifyInstance[] = [];
/** The workspaces the current test made on the shared gateway. */
let workspaces: string[] = [];

beforeAll(async () => {
  shared = await startRig(DEFAULT_WEBHOOKS);
});
afterAll(() => closeRig(shared));
beforeEach(() => {
  shared.fake.reset();
  shared.receiver.reset();
  workspaces = [];
});
afterEach(async () => {
  // A test is over once its tasks and deliveries are: nothing of it is sent during the next one.
  if (workspaces.length) {
    const db = shared.gw.services.db;
    await waitFor(() => db.selectFrom('tasks').select('status').where('workspace_id', 'in', workspaces).execute(), (rows) => rows.every((t) => t.status === 'completed' || t.status === 'failed'));
    await waitFor(() => db.selectFrom('webhook_deliveries').select('status').where('workspace_id', 'in', workspaces).execute(), (rows) => rows.every((d) => d.status !== 'pending'));
  }
  for (const app of extraApps.splice(0)) await app.close();
  await closeRig(own);
  own = undefined;
});

interface Setup {
  gw: TestGateway;
  tasks: FakeTasks;
  receiver: WebhookReceiver;
  /** The test's workspace and a key of it. */
  workspace: Workspace;
  key: string;
}

let named = 0;
/** A workspace and key of the test's own on the shared gateway, the fake's `protocol` tasks following `script`. */
async function start(script: Partial<TaskScript> = {}, protocol: 'openai' | 'runway' = 'openai'): Promise<Setup> {
  const tasks = protocol === 'openai' ? shared.openai : shared.runway;
  tasks.rescript(script);
  const workspace = await shared.gw.newWorkspace(`workspace-${++named}`);
  workspaces.push(workspace.id);
  return { gw: shared.gw, tasks, receiver: shared.receiver, workspace, key: await shared.gw.newKey({ workspace }) };
}

/** A gateway of the test's own on the webhook config `webhooks` (OpenAI's videos, default script). */
async function startOwn(webhooks: string): Promise<Setup> {
  own = await startRig(webhooks);
  return { gw: own.gw, tasks: own.openai, receiver: own.receiver, workspace: own.gw.workspace, key: own.gw.key };
}

const adminCall = (app: FastifyInstance, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url: `/admin/v1${url}`, headers: { authorization: `Bearer ${admin.token}` }, ...(payload ? { payload } : {}) });

async function register({ gw, workspace }: Setup, url: string, events?: string[]): Promise<{ id: string; secret: string }> {
  const res = await adminCall(gw.app, 'POST', `/workspaces/${workspace.id}/webhooks`, { url, ...(events ? { events } : {}) });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function createVideo(app: FastifyInstance, key: string, prompt = 'A cat'): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/videos', headers: { authorization: `Bearer ${key}` }, payload: { model: 'sora-2', prompt } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().id;
}

async function deliveries(gw: TestGateway, endpointId: string) {
  const res = await adminCall(gw.app, 'GET', `/webhooks/${endpointId}/deliveries`);
  expect(res.statusCode).toBe(200);
  return res.json().data as Record<string, any>[];
}

/** Nothing left to send, then or ever: no delivery is due even a day from now (what the deliverer's ticks look for). */
async function nothingDue(gw: TestGateway): Promise<void> {
  expect(await dueDeliveryIds(gw.services.db, Date.now() + 86_400_000, 100)).toEqual([]);
}

/** The event, checked with the standardwebhooks package: a good signature, a fresh timestamp. */
function verified(secret: string, hook: { headers: Record<string, unknown>; body: string }): Record<string, any> {
  return new Webhook(secret).verify(hook.body, hook.headers as Record<string, string>) as Record<string, any>;
}

describe('task webhooks', () => {
  it('deliver a signed video.completed event with the task as a status request shows it', async () => {
    const s = await start({ seconds: '4' });
    const { gw, receiver } = s;
    const endpoint = await register(s, `${receiver.url}/hooks/tasks`);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const id = await createVideo(gw.app, s.key);
    const [hook] = await receiver.waitFor(1);
    expect(hook.path).toBe('/hooks/tasks');
    expect(hook.headers['content-type']).toBe('application/json');
    expect(hook.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{28}$/);
    expect(Math.abs(Number(hook.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    const event = verified(endpoint.secret, hook);
    expect(event).toMatchObject({ type: 'video.completed', data: { id, object: 'video.task', status: 'completed', model: 'sora-2', archive_status: 'archived', cost: { amount: 0.4, currency: 'USD' } } });
    expect(Date.parse(event.timestamp)).toBeGreaterThan(0);
    expect(event.data.url).toMatch(/^https:\/\/gateway\.example\.com\/api\/v1\/files\/file_[0-9a-f]+\/content\?token=/);
    // The same object a status request answers (its signed link aside).
    const status = (await gw.app.inject({ method: 'GET', url: `/api/v1/videos/${id}`, headers: { authorization: `Bearer ${s.key}` } })).json();
    expect({ ...event.data, url: null }).toEqual({ ...status, url: null });
    // Another key's secret, or a body changed on the way, does not verify.
    expect(() => new Webhook('whsec_' + Buffer.alloc(32, 1).toString('base64')).verify(hook.body, hook.headers as Record<string, string>)).toThrow();
    expect(() => new Webhook(endpoint.secret).verify(hook.body.replace('completed', 'failed'), hook.headers as Record<string, string>)).toThrow();
    // The receiver has answered; the outcome is recorded a moment later.
    const [row] = await waitFor(() => deliveries(gw, endpoint.id), (rows) => rows[0]?.status !== 'pending');
    expect(row).toMatchObject({ id: hook.headers['webhook-id'], event_type: 'video.completed', task_id: id, status: 'delivered', attempts: 1, last_status: 200, last_error: null, next_attempt_at: null });
  });

  it('deliver video.failed with the reason, only to endpoints that take it', async () => {
    const s = await start({ outcome: 'failed' });
    const { gw, receiver } = s;
    const failures = await register(s, `${receiver.url}/failed`, ['video.failed']);
    const completions = await register(s, `${receiver.url}/completed`, ['video.completed', 'image.completed']);
    const id = await createVideo(gw.app, s.key, 'Something refused');
    const [hook] = await receiver.waitFor(1);
    expect(hook.path).toBe('/failed');
    expect(verified(failures.secret, hook)).toMatchObject({ type: 'video.failed', data: { id, status: 'failed', error: { code: 'moderation_blocked', message: 'The prompt was refused.' } } });
    // Written with the task's final status: nothing for the other endpoint, then or later.
    expect(await deliveries(gw, completions.id)).toEqual([]);
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.received).toHaveLength(1);
  });

  it('deliver image.completed and image.failed for a family-route image task', async () => {
    const s = await start({}, 'runway');
    const { gw, receiver, tasks } = s;
    const endpoint = await register(s, `${receiver.url}/images`, ['image.completed', 'image.failed']);
    const create = () => gw.app.inject({ method: 'POST', url: '/api/v1/runway/text_to_image', headers: { authorization: `Bearer ${s.key}` }, payload: { model: 'gen4-image', prompt: 'A lighthouse', size: '1920x1080' } });
    const done = (await create()).json().id;
    expect(verified(endpoint.secret, (await receiver.waitFor(1))[0])).toMatchObject({ type: 'image.completed', data: { id: done, object: 'image.task', status: 'completed', archive_status: 'archived' } });
    tasks.script.outcome = 'failed';
    const failed = (await create()).json().id;
    expect(verified(endpoint.secret, (await receiver.waitFor(2))[1])).toMatchObject({ type: 'image.failed', data: { id: failed, object: 'image.task', status: 'failed' } });
  });

  it('try a 500 again after the back-off, under the same webhook-id, and count it delivered once a 2xx comes', async () => {
    const s = await start();
    const { gw, receiver } = s;
    receiver.statuses = [500];
    receiver.errorBody = 'temporarily broken';
    const endpoint = await register(s, `${receiver.url}/hooks`);
    await createVideo(gw.app, s.key);
    const [first, second] = await receiver.waitFor(2);
    expect(second.headers['webhook-id']).toBe(first.headers['webhook-id']);
    // retrySeconds[0] is 0.2 s (plus up to 10% jitter).
    expect(second.at - first.at).toBeGreaterThanOrEqual(195);
    verified(endpoint.secret, first);
    verified(endpoint.secret, second);
    const [row] = await waitFor(() => deliveries(gw, endpoint.id), (rows) => rows[0]?.status !== 'pending');
    expect(row).toMatchObject({ status: 'delivered', attempts: 2, last_status: 200 });
    await nothingDue(gw);
    expect(receiver.received).toHaveLength(2);
  });

  it('count an answer slower than webhooks.timeoutSeconds as a failed attempt, and try again', async () => {
    const s = await startOwn('  tickMilliseconds: 10\n  timeoutSeconds: 0.5\n  retrySeconds: [0.1]\n  maxAttempts: 3\n');
    const { gw, receiver } = s;
    receiver.decide = (_hook, before) => (before.length ? 204 : 0);
    const endpoint = await register(s, `${receiver.url}/slow`);
    await createVideo(gw.app, s.key);
    const [first, second] = await receiver.waitFor(2);
    expect(second.at - first.at).toBeGreaterThanOrEqual(500);
    const [row] = await waitFor(() => deliveries(gw, endpoint.id), (rows) => rows[0]?.status === 'delivered');
    expect(row).toMatchObject({ attempts: 2, last_status: 204 });
  });

  it('give up after webhooks.maxAttempts, keeping a bounded reason', async () => {
    const s = await start();
    const { gw, receiver } = s;
    receiver.statuses = [503, 500, 502, 200];
    receiver.errorBody = 'x'.repeat(20_000);
    const endpoint = await register(s, `${receiver.url}/hooks`);
    await createVideo(gw.app, s.key);
    await receiver.waitFor(3);
    const [row] = await waitFor(() => deliveries(gw, endpoint.id), (rows) => rows[0]?.status !== 'pending');
    expect(row).toMatchObject({ status: 'failed', attempts: 3, last_status: 502, next_attempt_at: null });
    expect(row.last_error.length).toBeLessThanOrEqual(300);
    expect(row.last_error).toMatch(/^answered 502: x+$/);
    await nothingDue(gw);
    expect(receiver.received).toHaveLength(3);
  });

  it('refuse at delivery a name that resolves to a private address, without connecting', async () => {
    const s = await start();
    const { gw, receiver } = s;
    // An https URL on the default port with a host name passes registration; its address is checked when it connects.
    const endpoint = await register(s, 'https://localhost/hooks');
    await createVideo(gw.app, s.key);
    const [row] = await waitFor(() => deliveries(gw, endpoint.id), (rows) => rows[0]?.status === 'failed');
    expect(row).toMatchObject({ status: 'failed', attempts: 1, last_status: null });
    expect(row.last_error).toMatch(/loopback address, not a public one/);
    expect(receiver.received).toHaveLength(0);
  });

  it('sign with the old secret as well as the new one for the grace period after a rotation', async () => {
    const s = await start();
    const { gw, receiver } = s;
    const endpoint = await register(s, `${receiver.url}/hooks`);
    const rotated = await adminCall(gw.app, 'POST', `/webhooks/${endpoint.id}/rotate-secret`);
    const secret = rotated.json().secret as string;
    await createVideo(gw.app, s.key);
    const [hook] = await receiver.waitFor(1);
    expect(String(hook.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verified(secret, hook).type).toBe('video.completed');
    expect(verified(endpoint.secret, hook).type).toBe('video.completed');
  });

  it('a 410 Gone fails the delivery at once and disables the endpoint, with an audit row naming the gateway', async () => {
    const s = await start();
    const { gw, receiver } = s;
    receiver.statuses = [410];
    const endpoint = await register(s, `${receiver.url}/gone`);
    await createVideo(gw.app, s.key);
    const [row] = await waitFor(() => deliveries(gw, endpoint.id), (rows) => rows[0]?.status === 'failed');
    expect(row).toMatchObject({ attempts: 1, last_status: 410 });
    // The attempt is recorded first, the endpoint disabled just after.
    const shown = await waitFor(async () => (await adminCall(gw.app, 'GET', `/webhooks/${endpoint.id}`)).json(), (e) => e.enabled === false);
    expect(shown.enabled).toBe(false);
    expect(receiver.received).toHaveLength(1);
    const audit = (await adminCall(gw.app, 'GET', `/audit?workspace_id=${s.workspace.id}`)).json().data.filter((r: { target_id: string }) => r.target_id === endpoint.id);
    expect(audit.map((r: { action: string }) => r.action)).toEqual(['webhook.disable', 'webhook.create']);
    expect(audit[0]).toMatchObject({ actor: { kind: 'gateway', id: gw.services.instanceId }, before: { enabled: true }, after: { enabled: false, reason: expect.stringContaining('410 Gone') } });
  });

  it('a new app on the same database sends the deliveries the last one left pending', async () => {
    // The first app never looks for deliveries: its task completes and the event waits in the database.
    const s = await startOwn('  tickMilliseconds: 600000\n');
    const { gw, receiver } = s;
    const endpoint = await register(s, `${receiver.url}/hooks`);
    const id = await createVideo(gw.app, s.key);
    await waitFor(() => deliveries(gw, endpoint.id), (rows) => rows.length === 1);
    await gw.app.close();
    expect(receiver.received).toHaveLength(0);
    const file = join(gw.dir, 'restarted.yaml');
    copyFileSync(join(gw.dir, 'config.yaml'), file);
    writeFileSync(file, readFileSync(file, 'utf8').replace('tickMilliseconds: 600000', 'tickMilliseconds: 10'));
    const next = await buildApp(await createServices(await loadConfig(file)), { logger: false });
    extraApps.push(next);
    await next.ready();
    const [hook] = await receiver.waitFor(1);
    expect(verified(endpoint.secret, hook)).toMatchObject({ type: 'video.completed', data: { id } });
  });

  it('two apps on one database send each attempt once', async () => {
    const s = await startOwn('  tickMilliseconds: 5\n  retrySeconds: [0.05]\n  maxAttempts: 3\n');
    const { gw, receiver } = s;
    const other = await buildApp(await createServices(await loadConfig(join(gw.dir, 'config.yaml'))), { logger: false });
    extraApps.push(other);
    await other.ready();
    // Every first attempt fails, every second succeeds: each event arrives exactly twice.
    receiver.decide = (hook, before) => (before.some((b) => b.headers['webhook-id'] === hook.headers['webhook-id']) ? 200 : 500);
    const endpoint = await register(s, `${receiver.url}/hooks`);
    const ids = await Promise.all(Array.from({ length: 8 }, (_, i) => createVideo(i % 2 ? other : gw.app, s.key, `video ${i}`)));
    await receiver.waitFor(16, 20_000);
    const rows = await waitFor(() => deliveries(gw, endpoint.id), (rows) => rows.every((r) => r.status !== 'pending'));
    await nothingDue(gw);
    const perId = new Map<string, number>();
    for (const hook of receiver.received) perId.set(String(hook.headers['webhook-id']), (perId.get(String(hook.headers['webhook-id'])) ?? 0) + 1);
    expect([...perId.values()]).toEqual(Array.from({ length: 8 }, () => 2));
    const tasks = receiver.received.map((hook) => verified(endpoint.secret, hook).data.id as string);
    expect(new Set(tasks)).toEqual(new Set(ids));
    expect(rows.map((r) => [r.status, r.attempts])).toEqual(Array.from({ length: 8 }, () => ['delivered', 2]));
  });
});
