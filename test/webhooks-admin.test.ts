// Managing task webhooks: the admin API (answers checked against its OpenAPI document), the audit row of each change,
// bad input and unknown ids, a private address refused at registration, and the admin CLI's webhook commands.
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAdminToken } from '../src/admin/auth.js';
import { openApiDocument } from '../src/admin/openapi.js';
import { commands } from '../src/cli/admin/webhooks.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

const ops = newAdminToken();
let gw: TestGateway;
const ajv = new Ajv({ strict: false });
ajv.addSchema({ $id: 'admin', components: openApiDocument.components });
const matches = (name: string, value: unknown) => {
  const validate = ajv.getSchema(`admin#/components/schemas/${name}`)!;
  expect(validate(value), JSON.stringify(validate.errors)).toBe(true);
};

beforeAll(async () => {
  gw = await startGateway({ channels: {}, extraConfig: `admin:\n  tokens:\n    - id: ops\n      sha256: ${ops.sha256}\nnetwork:\n  allowHosts: ["127.0.0.1:8999"]\n` });
});
afterAll(async () => gw?.close());

async function api(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown) {
  const res = await gw.app.inject({ method, url: `/admin/v1${url}`, headers: { authorization: `Bearer ${ops.token}` }, ...(payload !== undefined ? { payload: payload as object } : {}) });
  return { status: res.statusCode, body: res.body ? res.json() : undefined };
}
const hooksUrl = () => `/workspaces/${gw.workspace.id}/webhooks`;
const audit = (target: string) => gw.services.db.selectFrom('audit_log').selectAll().where('target_id', '=', target).orderBy('id').execute();

describe('the webhook admin API', () => {
  it('registers an endpoint with every event by default, shows its secret once, and audits it without the secret', async () => {
    const created = await api('POST', hooksUrl(), { url: 'https://hooks.example.com/tasks' });
    expect(created.status).toBe(201);
    matches('CreatedWebhook', created.body);
    expect(created.body).toMatchObject({ url: 'https://hooks.example.com/tasks', enabled: true, events: ['video.completed', 'video.failed', 'image.completed', 'image.failed', 'batch.completed', 'batch.failed'] });
    const listed = await api('GET', hooksUrl());
    expect(listed.body.data).toEqual([{ ...created.body, secret: undefined }].map(({ secret: _s, ...rest }) => rest));
    for (const item of listed.body.data) matches('Webhook', item);
    expect(JSON.stringify(listed.body)).not.toContain('whsec_');
    const [row] = await audit(created.body.id);
    expect(row).toMatchObject({ action: 'webhook.create', actor_kind: 'admin_token', workspace_id: gw.workspace.id });
    expect(`${row.before}${row.after}`).not.toContain('whsec_');
  });

  it('disables, enables, changes events, rotates the secret and deletes, one audit row each', async () => {
    const { body: created } = await api('POST', hooksUrl(), { url: 'https://hooks.example.com/b', events: ['image.failed'] });
    const disabled = await api('PATCH', `/webhooks/${created.id}`, { enabled: false });
    expect(disabled.body).toMatchObject({ enabled: false, events: ['image.failed'] });
    matches('Webhook', disabled.body);
    expect((await api('PATCH', `/webhooks/${created.id}`, { enabled: true, events: ['video.completed', 'video.completed'] })).body).toMatchObject({ enabled: true, events: ['video.completed'] });
    const rotated = await api('POST', `/webhooks/${created.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    matches('CreatedWebhook', rotated.body);
    expect(rotated.body.secret).not.toBe(created.secret);
    const stored = await gw.services.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    expect([stored.secret, stored.previous_secret]).toEqual([rotated.body.secret, created.secret]);
    expect(Number(stored.previous_until)).toBeGreaterThan(Date.now() + 86_000_000);
    expect((await api('DELETE', `/webhooks/${created.id}`)).status).toBe(204);
    expect((await api('GET', `/webhooks/${created.id}`)).status).toBe(404);
    expect((await audit(created.id)).map((r) => r.action)).toEqual(['webhook.create', 'webhook.disable', 'webhook.update', 'webhook.rotate', 'webhook.delete']);
  });

  it('lists an endpoint\'s deliveries, newest first, in pages', async () => {
    const { body: created } = await api('POST', hooksUrl(), { url: 'https://hooks.example.com/c' });
    const page = await api('GET', `/webhooks/${created.id}/deliveries?limit=5`);
    expect(page).toEqual({ status: 200, body: { data: [], has_more: false } });
    matches('WebhookDeliveryPage', page.body);
    expect((await api('GET', `/webhooks/${created.id}/deliveries?limit=500`)).status).toBe(400);
    expect((await api('GET', `/webhooks/${created.id}/deliveries?before=nope`)).status).toBe(400);
  });

  it.each([
    ['plain http', 'http://hooks.example.com/x', /only https/],
    ['a private address', 'https://10.1.2.3/x', /private address/],
    ['loopback', 'https://127.0.0.2/x', /loopback address/],
    ['IPv6 loopback', 'https://[::1]/x', /loopback address/],
    ['the metadata address', 'https://169.254.169.254/latest/meta-data', /linkLocal address/],
    ['credentials', 'https://user:pw@hooks.example.com/x', /credentials/],
    ['another port', 'https://hooks.example.com:8443/x', /default port/],
  ])('refuses %s at registration with 400', async (_what, url, reason) => {
    const res = await api('POST', hooksUrl(), { url });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'webhook_url_refused', param: 'url' });
    expect(res.body.error.message).toMatch(reason);
  });

  it('allows a network.allowHosts entry (host:port also allows plain http)', async () => {
    expect((await api('POST', hooksUrl(), { url: 'http://127.0.0.1:8999/hook' })).status).toBe(201);
  });

  it.each([
    ['no url', {}, 'url'],
    ['a url that is not one', { url: 'not a url' }, 'url'],
    ['an unknown event', { url: 'https://hooks.example.com/x', events: ['video.started'] }, 'events.0'],
    ['no events', { url: 'https://hooks.example.com/x', events: [] }, 'events'],
    ['an unknown field', { url: 'https://hooks.example.com/x', secret: 'mine' }, 'secret'],
  ])('answers 400 for %s', async (_what, payload, param) => {
    const res = await api('POST', hooksUrl(), payload);
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe(param);
  });

  it('registers exactly the limit of 20 out of 40 registrations at once, answering the rest 400', async () => {
    const workspace = await gw.newWorkspace('forty-at-once');
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => api('POST', `/workspaces/${workspace.id}/webhooks`, { url: `https://hooks.example.com/${i}` })));
    expect(answers.filter((a) => a.status === 201)).toHaveLength(20);
    expect(answers.filter((a) => a.status !== 201).map((a) => [a.status, a.body.error.code])).toEqual(Array(20).fill([400, 'too_many_webhooks']));
    expect((await api('GET', `/workspaces/${workspace.id}/webhooks`)).body.data).toHaveLength(20);
  });

  it('answers 400 for an empty change and 404 for unknown ids', async () => {
    const { body: created } = await api('POST', hooksUrl(), { url: 'https://hooks.example.com/d' });
    expect((await api('PATCH', `/webhooks/${created.id}`, {})).status).toBe(400);
    const unknown = `whep_${'0'.repeat(28)}`;
    for (const [method, url] of [['GET', `/webhooks/${unknown}`], ['PATCH', `/webhooks/${unknown}`], ['DELETE', `/webhooks/${unknown}`], ['POST', `/webhooks/${unknown}/rotate-secret`], ['GET', `/webhooks/${unknown}/deliveries`], ['GET', '/webhooks/not-an-id'], ['GET', '/workspaces/ws_nope/webhooks']] as const) {
      const res = await api(method, url, method === 'PATCH' ? { enabled: false } : undefined);
      expect([url, res.status]).toEqual([url, 404]);
    }
  });
});

describe('npm run admin -- webhook', () => {
  const cli = async (name: string, positionals: string[], values: Record<string, string | boolean> = {}) => {
    const lines: string[] = [];
    await commands.find((c) => c.name === name)!.run({ db: gw.services.db, config: gw.services.config, positionals, values, print: (l) => lines.push(l) });
    return lines;
  };

  it('creates (printing the secret once), lists, disables, rotates and deletes, each audited as the CLI', async () => {
    const created = JSON.parse((await cli('webhook create', [], { workspace: 'test', url: 'https://hooks.example.com/cli', events: 'video.completed,video.failed', json: true }))[0]);
    expect(created).toMatchObject({ url: 'https://hooks.example.com/cli', events: ['video.completed', 'video.failed'], enabled: true });
    expect(created.secret).toMatch(/^whsec_/);
    const listed = await cli('webhook list', [], { workspace: 'test' });
    expect(listed.find((l) => l.startsWith(created.id))).toBe(`${created.id}  https://hooks.example.com/cli  events=video.completed,video.failed  enabled`);
    expect(listed.join('\n')).not.toContain('whsec_');
    expect(await cli('webhook disable', [created.id])).toEqual([`${created.id} DISABLED`]);
    expect((await cli('webhook rotate', [created.id]))[0]).toMatch(new RegExp(`^new signing secret for ${created.id}: whsec_`));
    expect(await cli('webhook deliveries', [created.id])).toEqual(['no deliveries']);
    expect(await cli('webhook delete', [created.id])).toEqual([`deleted ${created.id}`]);
    const rows = await audit(created.id);
    expect(rows.map((r) => [r.action, r.actor_kind])).toEqual([['webhook.create', 'cli'], ['webhook.disable', 'cli'], ['webhook.rotate', 'cli'], ['webhook.delete', 'cli']]);
  });

  it('refuses a private address and an unknown event', async () => {
    await expect(cli('webhook create', [], { workspace: 'test', url: 'https://192.168.1.10/x' })).rejects.toThrow(/private address/);
    await expect(cli('webhook create', [], { workspace: 'test', url: 'https://hooks.example.com/x', events: 'video.done' })).rejects.toThrow(/unknown: video.done/);
  });
});
