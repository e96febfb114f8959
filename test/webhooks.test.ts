// Task webhooks through HTTP: video tasks driven to completion and to failure against the fake upstream deliver signed
// Standard Webhooks events to a receiver on 127.0.0.1, verified with the `standardwebhooks` package (an independent
// implementation); retries with back-off; the SSRF guard at delivery; a restart resumes pending deliveries; two apps on
// one database send each attempt once.
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { newAdminToken } from '../src/admin/auth.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/compile/load-config.js';
import { createServices } from '../src/services.js';
import { dueDeliveryIds } from '../src/webhooks/store.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { installOpenAIVideos, installRunwayTasks, type FakeTasks, type TaskScript } from './kit/fake-tasks.js';
import { startGateway, type TestGateway } from './kit/gateway.js';
import { openaiVideoChannel, runwayChannel, waitFor } from './kit/tasks.js';
import { WebhookReceiver } from './kit/webhook-receiver.js';

const admin = newAdminToken();
let fake: FakeUpstream | undefined;
let receiver: WebhookReceiver | undefined;
let gw: TestGateway | undefined;
const extraApps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of extraApps.splice(0)) await app.close();
  await gw?.close();
  await fake?.close();
  await receiver?.close();
  gw = fake = receiver = undefined;
});

interface Setup {
  gw: TestGateway;
  tasks: FakeTasks;
  receiver: WebhookReceiver;
}

/** A gateway with a fake video upstream and a receiver both allowed on loopback; fast ticks and a short retry schedule. */
async function start(script: Partial<TaskScript> = {}, webhooks = '  tickMilliseconds: 10\n  retrySeconds: [0.2, 0.3]\n  maxAttempts: 3\n', protocol: 'openai' | 'runway' = 'openai'): Promise<Setup> {
  fake = await FakeUpstream.start();
  receiver = await WebhookReceiver.start();
  const tasks = protocol === 'openai' ? installOpenAIVideos(fake, script) : installRunwayTasks(fake, script);
  const extraConfig = [
    'tasks:\n  tickMilliseconds: 10\n  leaseSeconds: 1\n  poll: { firstSeconds: 0.01, maxSeconds: 0.03 }\n',
    `network:\n  allowHosts: ["${new URL(fake.url).host}", "${receiver.host}"]\n`,
    `webhooks:\n${webhooks}`,
    `admin:\n  tokens:\n    - id: ops\n      sha256: ${admin.sha256}\n`,
  ].join('');
  gw = await startGateway({ channels: { tasks: protocol === 'openai' ? openaiVideoChannel(fake.url) : runwayChannel(fake.url) }, extraConfig, serverConfig: '  publicUrl: https://gateway.example.com\n' });
  return { gw, tasks, receiver };
}

const adminCall = (app: FastifyInstance, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: object) =>
  app.inject({ method, url: `/admin/v1${url}`, headers: { authorization: `Bearer ${admin.token}` }, ...(payload ? { payload } : {}) });

async function register(gw: TestGateway, url: string, events?: string[]): Promise<{ id: string; secret: string }> {
  const res = await adminCall(gw.app, 'POST', `/workspaces/${gw.workspace.id}/webhooks`, { url, ...(events ? { events } : {}) });
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
    const { gw, receiver } = await start({ seconds: '4' });
    const endpoint = await register(gw, `${receiver.url}/hooks/tasks`);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const id = await createVideo(gw.app, gw.key);
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
    const status = (await gw.app.inject({ method: 'GET', url: `/api/v1/videos/${id}`, headers: { authorization: `Bearer ${gw.key}` } })).json();
    expect({ ...event.data, url: null }).toEqual({ ...status, url: null });
    // Another key's secret, or a body changed on the way, does not verify.
    expect(() => new Webhook('whsec_' + Buffer.alloc(32, 1).toString('base64')).verify(hook.body, hook.headers as Record<string, string>)).toThrow();
    expect(() => new Webhook(endpoint.secret).verify(hook.body.replace('completed', 'failed'), hook.headers as Record<string, string>)).toThrow();
    // The receiver has answered; the outcome is recorded a moment later.
    const [row] = await waitFor(() => deliveries(gw, endpoint.id), (rows) => rows[0]?.status !== 'pending');
    expect(row).toMatchObject({ id: hook.headers['webhook-id'], event_type: 'video.completed', task_id: id, status: 'delivered', attempts: 1, last_status: 200, last_error: null, next_attempt_at: null });
  });

  it('deliver video.failed with the reason, only to endpoints that take it', async () => {
    const { gw, receiver } = await start({ outcome: 'failed' });
    const failures = await register(gw, `${receiver.url}/failed`, ['video.failed']);
    const completions = await register(gw, `${receiver.url}/completed`, ['video.completed', 'image.completed']);
    const id = await createVideo(gw.app, gw.key, 'Something refused');
    const [hook] = await receiver.waitFor(1);
    expect(hook.path).toBe('/failed');
    expect(verified(failures.secret, hook)).toMatchObject({ type: 'video.failed', data: { id, status: 'failed', error: { code: 'moderation_blocked', message: 'The prompt was refused.' } } });
    // Written with the task's final status: nothing for the other endpoint, then or later.
    expect(await deliveries(gw, completions.id)).toEqual([]);
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.received).toHaveLength(1);
  });

  it('deliver image.completed and image.failed for a family-route image task', async () => {
    const { gw, receiver, tasks } = await start({}, undefined, 'runway');
    const endpoint = await register(gw, `${receiver.url}/images`, ['image.completed', 'image.failed']);
    const create = () => gw.app.inject({ method: 'POST', url: '/api/v1/runway/text_to_image', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'gen4-image', prompt: 'A lighthouse', size: '1920x1080' } });
    const done = (await create()).json().id;
    expect(verified(endpoint.secret, (await receiver.waitFor(1))[0])).toMatchObject({ type: 'image.completed', data: { id: done, object: 'image.task', status: 'completed', archive_status: 'archived' } });
    tasks.script.outcome = 'failed';
    const failed = (await create()).json().id;
    expect(verified(endpoint.secret, (await receiver.waitFor(2))[1])).toMatchObject({ type: 'image.failed', data: { id: failed, object: 'image.task', status: 'failed' } });
  });

  it('try a 500 again after the back-off, under the same webhook-id, and count it delivered once a 2xx comes', async () => {
    const { gw, receiver } = await start();
    receiver.statuses = [500];
    receiver.errorBody = 'temporarily broken';
    const endpoint = await register(gw, `${receiver.url}/hooks`);
    await createVideo(gw.app, gw.key);
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
    const { gw, receiver } = await start({}, '  tickMilliseconds: 10\n  timeoutSeconds: 0.5\n  retrySeconds: [0.1]\n  maxAttempts: 3\n');
    receiver.decide = (_hook, before) => (before.length ? 204 : 0);
    const endpoint = await register(gw, `${receiver.url}/slow`);
    await createVideo(gw.app, gw.key);
    const [first, second] = await receiver.waitFor(2);
    expect(second.at - first.at).toBeGreaterThanOrEqual(500);
    const [row] = await waitFor(() => deliveries(gw, endpoint.id), (rows) => rows[0]?.status === 'delivered');
    expect(row).toMatchObject({ attempts: 2, last_status: 204 });
  });

  it('give up after webhooks.maxAttempts, keeping a bounded reason', async () => {
    const { gw, receiver } = await start();
    receiver.statuses = [503, 500, 502, 200];
    receiver.errorBody = 'x'.repeat(20_000);
    const endpoint = await register(gw, `${receiver.url}/hooks`);
    await createVideo(gw.app, gw.key);
    await receiver.waitFor(3);
    const [row] = await waitFor(() => deliveries(gw, endpoint.id), (rows) => rows[0]?.status !== 'pending');
    expect(row).toMatchObject({ status: 'failed', attempts: 3, last_status: 502, next_attempt_at: null });
    expect(row.last_error.length).toBeLessThanOrEqual(300);
    expect(row.last_error).toMatch(/^answered 502: x+$/);
    await nothingDue(gw);
    expect(receiver.received).toHaveLength(3);
  });

  it('refuse at delivery a name that resolves to a private address, without connecting', async () => {
    const { gw, receiver } = await start();
    // An https URL on the default port with a host name passes registration; its address is checked when it connects.
    const endpoint = await register(gw, 'https://localhost/hooks');
    await createVideo(gw.app, gw.key);
    const [row] = await waitFor(() => deliveries(gw, endpoint.id), (rows) => rows[0]?.status === 'failed');
    expect(row).toMatchObject({ status: 'failed', attempts: 1, last_status: null });
    expect(row.last_error).toMatch(/loopback address, not a public one/);
    expect(receiver.received).toHaveLength(0);
  });

  it('sign with the old secret as well as the new one for the grace period after a rotation', async () => {
    const { gw, receiver } = await start();
    const endpoint = await register(gw, `${receiver.url}/hooks`);
    const rotated = await adminCall(gw.app, 'POST', `/webhooks/${endpoint.id}/rotate-secret`);
    const secret = rotated.json().secret as string;
    await createVideo(gw.app, gw.key);
    const [hook] = await receiver.waitFor(1);
    expect(String(hook.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verified(secret, hook).type).toBe('video.completed');
    expect(verified(endpoint.secret, hook).type).toBe('video.completed');
  });

  it('a 410 Gone fails the delivery at once and disables the endpoint, with an audit row naming the gateway', async () => {
    const { gw, receiver } = await start();
    receiver.statuses = [410];
    const endpoint = await register(gw, `${receiver.url}/gone`);
    await createVideo(gw.app, gw.key);
    const [row] = await waitFor(() => deliveries(gw, endpoint.id), (rows) => rows[0]?.status === 'failed');
    expect(row).toMatchObject({ attempts: 1, last_status: 410 });
    // The attempt is recorded first, the endpoint disabled just after.
    const shown = await waitFor(async () => (await adminCall(gw.app, 'GET', `/webhooks/${endpoint.id}`)).json(), (e) => e.enabled === false);
    expect(shown.enabled).toBe(false);
    expect(receiver.received).toHaveLength(1);
    const audit = (await adminCall(gw.app, 'GET', `/audit?workspace_id=${gw.workspace.id}`)).json().data.filter((r: { target_id: string }) => r.target_id === endpoint.id);
    expect(audit.map((r: { action: string }) => r.action)).toEqual(['webhook.disable', 'webhook.create']);
    expect(audit[0]).toMatchObject({ actor: { kind: 'gateway', id: gw.services.instanceId }, before: { enabled: true }, after: { enabled: false, reason: expect.stringContaining('410 Gone') } });
  });

  it('a new app on the same database sends the deliveries the last one left pending', async () => {
    // The first app never looks for deliveries: its task completes and the event waits in the database.
    const { gw, receiver } = await start({}, '  tickMilliseconds: 600000\n');
    const endpoint = await register(gw, `${receiver.url}/hooks`);
    const id = await createVideo(gw.app, gw.key);
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
    const { gw, receiver } = await start({}, '  tickMilliseconds: 5\n  retrySeconds: [0.05]\n  maxAttempts: 3\n');
    const other = await buildApp(await createServices(await loadConfig(join(gw.dir, 'config.yaml'))), { logger: false });
    extraApps.push(other);
    await other.ready();
    // Every first attempt fails, every second succeeds: each event arrives exactly twice.
    receiver.decide = (hook, before) => (before.some((b) => b.headers['webhook-id'] === hook.headers['webhook-id']) ? 200 : 500);
    const endpoint = await register(gw, `${receiver.url}/hooks`);
    const ids = await Promise.all(Array.from({ length: 8 }, (_, i) => createVideo(i % 2 ? other : gw.app, gw.key, `video ${i}`)));
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
