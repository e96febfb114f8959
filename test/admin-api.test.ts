// The admin REST API (/admin/v1) through HTTP: its OpenAPI document (validated, and every answer checked against it),
// who may call it, keys, workspaces, users and roles, usage, reload, and the audit row each change writes, atomically.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { validate } from '@readme/openapi-parser';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAdminToken } from '../src/admin/auth.js';
import { adminRoutes } from '../src/admin/routes.js';
import { adminApi, type AdminApi } from './kit/admin-api.js';
import { DashboardClient, addUser } from './kit/dashboard.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, testModels, type TestGateway } from './kit/gateway.js';

const ops = newAdminToken();
const other = newAdminToken();
let gw: TestGateway;
let fake: FakeUpstream;
let api: AdminApi;
/** The gateway's clock: real time unless a test sets `at` (budget periods are read at it). */
const clock: { at?: number } = {};

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({
    channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: testModels.flatChat }) },
    extraConfig: `admin:\n  tokens:\n    - id: ops\n      sha256: ${ops.sha256}\n    - id: backup\n      sha256: ${other.sha256}\n`,
    listen: true,
    overrides: { now: () => clock.at ?? Date.now() },
  });
  api = await adminApi(gw.url, ops.token);
});
afterAll(async () => {
  await gw?.close();
  await fake?.close();
});

const auditRows = async () => gw.services.db.selectFrom('audit_log').selectAll().orderBy('id').execute();

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document, and the routes and the document name the same operations', async () => {
    const res = await fetch(`${gw.url}/admin/v1/openapi.json`);
    expect(res.status).toBe(200);
    const raw = await res.json();
    const result = await validate(structuredClone(raw));
    expect(result.valid ? [] : result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    const documentedOps = Object.entries(raw.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
      Object.keys(item).filter((k) => k !== 'parameters').map((m) => `${m.toUpperCase()} /admin/v1${path}`),
    );
    expect([...adminRoutes].filter((r) => !r.endsWith('/openapi.json')).sort()).toEqual(documentedOps.sort());
  });
});

describe('who may call it', () => {
  it("refuses a change an owner's session cookie carries unless the browser shows it comes from the gateway's own pages", async () => {
    const mine = await gw.newWorkspace('owned-by-opal');
    await addUser(gw.services, 'opal@example.com', [[mine, 'owner']]);
    const opal = new DashboardClient(gw.url);
    expect((await opal.signIn('opal@example.com')).status).toBe(303);
    const cookie = [...opal.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const create = (headers: Record<string, string>) => api('POST', `/workspaces/${mine.id}/keys`, { token: null, headers: { cookie, ...headers }, body: { name: 'from-session' } });
    for (const headers of [{}, { 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }, { 'sec-fetch-site': 'none' }, { origin: 'https://evil.example' }, { origin: gw.url, 'sec-fetch-site': 'cross-site' }] as Record<string, string>[]) {
      const refused = await create(headers);
      expect([JSON.stringify(headers), refused.status, refused.body.error.code]).toEqual([JSON.stringify(headers), 403, 'cross_site_refused']);
    }
    expect((await api('GET', `/workspaces/${mine.id}/keys`, { token: null, headers: { cookie } })).body.data).toEqual([]);
    expect((await create({ 'sec-fetch-site': 'same-origin' })).status).toBe(201);
    expect((await create({ origin: gw.url })).status).toBe(201);
    expect((await create({ origin: gw.url, 'sec-fetch-site': 'same-origin' })).status).toBe(201);
  });

  it('refuses no credentials, a wrong token and a workspace API key, each with a typed 401', async () => {
    expect((await api('GET', '/workspaces', { token: null })).body.error.code).toBe('admin_auth_required');
    const wrong = await api('GET', '/workspaces', { token: newAdminToken().token });
    expect([wrong.status, wrong.body.error.code]).toEqual([401, 'invalid_admin_token']);
    const key = await api('GET', '/workspaces', { token: gw.key });
    expect([key.status, key.body.error.code]).toEqual([401, 'workspace_key_refused']);
    const header = await api('GET', '/workspaces', { token: null, headers: { 'x-api-key': gw.key } });
    expect([header.status, header.body.error.code]).toEqual([401, 'workspace_key_refused']);
    // The caller is settled before the body is read: a broken body from nobody is a 401, not a parse error.
    const unread = await fetch(`${gw.url}/admin/v1/workspaces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":' });
    expect(unread.status).toBe(401);
  });

  it("lets an owner's dashboard session reach only the workspaces they own, and no global action", async () => {
    const mine = await gw.newWorkspace('owned-by-olive');
    const theirs = await gw.newWorkspace('not-olives');
    await addUser(gw.services, 'olive@example.com', [[mine, 'owner'], [gw.workspace, 'member']]);
    await addUser(gw.services, 'adam@example.com', [[mine, 'admin']]);
    const olive = new DashboardClient(gw.url);
    expect((await olive.signIn('olive@example.com')).status).toBe(303);
    // What a browser sends with a change from a page of the gateway (fetch leaves out Origin here).
    const cookie = { cookie: [...olive.cookies].map(([k, v]) => `${k}=${v}`).join('; '), 'sec-fetch-site': 'same-origin' };
    const listed = await api('GET', '/workspaces', { token: null, headers: cookie });
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((w: { name: string }) => w.name)).toEqual(['owned-by-olive']);
    expect((await api('GET', `/workspaces/${theirs.id}/keys`, { token: null, headers: cookie })).status).toBe(404);
    expect((await api('GET', `/workspaces/${gw.workspace.id}/keys`, { token: null, headers: cookie })).status).toBe(404);
    const created = await api('POST', `/workspaces/${mine.id}/keys`, { token: null, headers: cookie, body: { name: 'from-session' } });
    expect(created.status).toBe(201);
    const row = (await auditRows()).find((r) => r.target_id === created.body.id)!;
    expect(row).toMatchObject({ actor_kind: 'user', action: 'key.create', workspace_id: mine.id });
    expect((await api('POST', '/workspaces', { token: null, headers: cookie, body: { name: 'olive-new' } })).status).toBe(403);
    expect((await api('POST', '/reload', { token: null, headers: cookie })).status).toBe(403);
    // A change carried by the cookie from another site's page is refused.
    const crossSite = await api('PATCH', `/keys/${created.body.id}`, { token: null, headers: { ...cookie, origin: 'https://evil.example' }, body: { spend_cap: 1 } });
    expect(crossSite.status).toBe(403);

    const adam = new DashboardClient(gw.url);
    await adam.signIn('adam@example.com');
    const notOwner = await api('GET', '/workspaces', { token: null, headers: { cookie: [...adam.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
    expect([notOwner.status, notOwner.body.error.code]).toEqual([403, 'not_an_owner']);
  });
});

describe('keys', () => {
  it('creates a key shown once that works at once, lists it without the key, changes its cap, scopes and expiry, and revokes it', async () => {
    const expiresAt = Math.floor(Date.now() / 1000) + 7 * 86400;
    const created = await api('POST', `/workspaces/${gw.workspace.id}/keys`, { body: { name: 'ci', scopes: ['llm.chat'], expires_at: expiresAt, spend_cap: 0.02 } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'ci', scopes: ['llm.chat'], expires_at: expiresAt, spend_cap: 0.02, spent: 0, revoked_at: null });
    const key: string = created.body.key;
    expect(key).toMatch(/^sk-gw-/);
    const chat = () => fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'flat-chat', messages: [{ role: 'user', content: 'hi' }] }) });
    expect((await chat()).status).toBe(200);

    const listed = await api('GET', `/workspaces/${gw.workspace.id}/keys`);
    expect(JSON.stringify(listed.body)).not.toContain(key);
    expect(listed.body.data.find((k: { id: string }) => k.id === created.body.id)).toMatchObject({ prefix: key.slice(0, 12), spent: 0.01 });

    const id = created.body.id;
    expect((await api('PATCH', `/keys/${id}`, { body: { spend_cap: 0.01 } })).body).toMatchObject({ spend_cap: 0.01, spent: 0.01 });
    expect((await chat()).status).toBe(402);
    expect((await api('PATCH', `/keys/${id}`, { body: { spend_cap: null, scopes: ['llm.chat', 'files.write'], expires_at: null } })).body).toMatchObject({ spend_cap: null, scopes: ['llm.chat', 'files.write'], expires_at: null });
    expect((await chat()).status).toBe(200);
    expect((await api('GET', `/keys/${id}`)).body.spent).toBe(0.02);

    const revoked = await api('DELETE', `/keys/${id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revoked_at).toBeGreaterThan(0);
    expect((await chat()).status).toBe(401);
    expect((await api('DELETE', `/keys/${id}`)).status).toBe(200);

    const rows = (await auditRows()).filter((r) => r.target_id === id);
    expect(rows.map((r) => r.action)).toEqual(['key.create', 'key.cap', 'key.update', 'key.revoke']);
    expect(rows.every((r) => r.actor_kind === 'admin_token' && r.actor_id === 'ops' && r.address === '127.0.0.1')).toBe(true);
    expect(JSON.parse(rows[1].before!)).toMatchObject({ spend_cap: 0.02 });
    expect(JSON.parse(rows[1].after!)).toMatchObject({ spend_cap: 0.01 });
    const hash = (await gw.services.db.selectFrom('api_keys').select('hash').where('id', '=', id).executeTakeFirstOrThrow()).hash;
    for (const r of rows) expect(`${r.before}${r.after}`).not.toMatch(new RegExp(`${key}|${hash}`));
  });

  it('answers bad input with typed 400s that name the field, unknown ids with 404, and changes nothing', async () => {
    const before = (await auditRows()).length;
    const keysBefore = (await api('GET', `/workspaces/${gw.workspace.id}/keys`)).body.data.length;
    const cases: [unknown, string][] = [
      [{ scopes: ['everything'] }, 'scopes'],
      [{ spend_cap: -1 }, 'spend_cap'],
      [{ spend_cap: 0.0000001 }, 'spend_cap'],
      [{ spend_cap: '10' }, 'spend_cap'],
      [{ expires_at: 1000 }, 'expires_at'],
      [{ colour: 'red' }, 'colour'],
      [{ name: 'x'.repeat(101) }, 'name'],
    ];
    for (const [body, param] of cases) {
      const res = await api('POST', `/workspaces/${gw.workspace.id}/keys`, { body });
      expect([res.status, res.body.error.type, res.body.error.param], JSON.stringify(body)).toEqual([400, 'invalid_request_error', param]);
    }
    expect((await api('PATCH', `/keys/key_${'0'.repeat(20)}`, { body: { spend_cap: 1 } })).body.error.code).toBe('key_not_found');
    expect((await api('PATCH', `/keys/${'x'.repeat(100)}`, { body: { spend_cap: 1 } })).status).toBe(404);
    expect((await api('PATCH', `/keys/key_${'0'.repeat(20)}`, { body: {} })).status).toBe(400);
    expect((await api('GET', '/workspaces/ws_nope/keys')).body.error.code).toBe('workspace_not_found');
    expect((await api('DELETE', '/keys/key_nope')).status).toBe(404);
    const notJson = await fetch(`${gw.url}/admin/v1/workspaces/${gw.workspace.id}/keys`, { method: 'POST', headers: { authorization: `Bearer ${ops.token}`, 'content-type': 'application/json' }, body: '{"name":' });
    expect(notJson.status).toBe(400);
    expect((await auditRows()).length).toBe(before);
    expect((await api('GET', `/workspaces/${gw.workspace.id}/keys`)).body.data.length).toBe(keysBefore);
  });

  it('makes a change and its audit row land together: when the audit row cannot be written, the key is not created', async () => {
    const keysBefore = await gw.services.db.selectFrom('api_keys').select('id').execute();
    await sql`alter table audit_log rename to audit_log_away`.execute(gw.services.db);
    try {
      const res = await api('POST', `/workspaces/${gw.workspace.id}/keys`, { body: { name: 'doomed' } });
      expect(res.status).toBe(500);
    } finally {
      await sql`alter table audit_log_away rename to audit_log`.execute(gw.services.db);
    }
    expect(await gw.services.db.selectFrom('api_keys').select('id').execute()).toEqual(keysBefore);
  });
});

describe('workspaces, users and roles', () => {
  it('creates a workspace with a cap, changes the cap, and refuses a duplicate name', async () => {
    const created = await api('POST', '/workspaces', { body: { name: 'acme', spend_cap: 25 } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'acme', spend_cap: 25, spent: 0 });
    expect((await api('POST', '/workspaces', { body: { name: 'acme' } })).body.error).toMatchObject({ code: 'workspace_exists', param: 'name' });
    expect((await api('POST', '/workspaces', { body: { name: '../etc' } })).status).toBe(400);
    expect((await api('PATCH', `/workspaces/${created.body.id}`, { body: { spend_cap: null } })).body.spend_cap).toBeNull();
    expect((await api('GET', `/workspaces/${created.body.id}`)).body.spend_cap).toBeNull();
    expect((await api('GET', '/workspaces')).body.data.some((w: { name: string }) => w.name === 'acme')).toBe(true);
    const rows = (await auditRows()).filter((r) => r.target_id === created.body.id);
    expect(rows.map((r) => [r.action, r.before && JSON.parse(r.before), r.after && JSON.parse(r.after).spend_cap])).toEqual([
      ['workspace.create', null, 25],
      ['workspace.cap', { spend_cap: 25, spend_cap_period: 'total' }, null],
    ]);
  });

  it('sets the period of a key\'s and a workspace\'s cap, and refuses an unknown period with 400', async () => {
    const ws = (await api('POST', '/workspaces', { body: { name: 'periodic', spend_cap: 100, spend_cap_period: 'monthly' } })).body;
    expect(ws).toMatchObject({ spend_cap: 100, spend_cap_period: 'monthly' });
    expect((await api('PATCH', `/workspaces/${ws.id}`, { body: { spend_cap_period: 'weekly' } })).body).toMatchObject({ spend_cap: 100, spend_cap_period: 'weekly' });
    const key = (await api('POST', `/workspaces/${ws.id}/keys`, { body: { spend_cap: 5, spend_cap_period: 'daily' } })).body;
    expect(key).toMatchObject({ spend_cap: 5, spend_cap_period: 'daily' });
    expect((await api('PATCH', `/keys/${key.id}`, { body: { spend_cap: 7 } })).body).toMatchObject({ spend_cap: 7, spend_cap_period: 'daily' });
    const refused = await api('PATCH', `/keys/${key.id}`, { body: { spend_cap_period: 'hourly' } });
    expect(refused.status).toBe(400);
    expect((await api('GET', `/keys/${key.id}`)).body).toMatchObject({ spend_cap: 7, spend_cap_period: 'daily' });
  });

  it('adds a user with a one-time password link, changes the role, removes them, and keeps the last owner', async () => {
    const ws = (await api('POST', '/workspaces', { body: { name: 'people' } })).body;
    const added = await api('PUT', `/workspaces/${ws.id}/users`, { body: { email: 'Pat@Example.com', role: 'owner' } });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ email: 'pat@example.com', role: 'owner', password_set: false });
    expect(added.body.password_link).toMatch(/\/dashboard\/setup\?token=[A-Za-z0-9_-]{32}$/);
    const second = await api('PUT', `/workspaces/${ws.id}/users`, { body: { email: 'sam@example.com', role: 'member' } });
    const promoted = await api('PUT', `/workspaces/${ws.id}/users`, { body: { email: 'sam@example.com', role: 'admin' } });
    expect([promoted.status, promoted.body.role, promoted.body.password_link]).toEqual([200, 'admin', undefined]);
    expect((await api('PUT', `/workspaces/${ws.id}/users`, { body: { email: 'sam@example.com', role: 'root' } })).body.error.param).toBe('role');
    expect((await api('PUT', `/workspaces/${ws.id}/users`, { body: { email: 'not-an-email', role: 'member' } })).body.error.param).toBe('email');
    expect((await api('GET', `/workspaces/${ws.id}/users`)).body.data.map((m: { email: string; role: string }) => `${m.email}:${m.role}`)).toEqual(['pat@example.com:owner', 'sam@example.com:admin']);
    const lastOwner = await api('DELETE', `/workspaces/${ws.id}/users/${added.body.user_id}`);
    expect([lastOwner.status, lastOwner.body.error.code]).toEqual([400, 'last_owner']);
    const demoted = await api('PUT', `/workspaces/${ws.id}/users`, { body: { email: 'pat@example.com', role: 'admin' } });
    expect([demoted.status, demoted.body.error.code]).toEqual([400, 'last_owner']);
    expect((await api('DELETE', `/workspaces/${ws.id}/users/${second.body.user_id}`)).status).toBe(204);
    expect((await api('DELETE', `/workspaces/${ws.id}/users/${second.body.user_id}`)).status).toBe(404);
    const actions = (await auditRows()).filter((r) => r.workspace_id === ws.id).map((r) => r.action);
    expect(actions).toEqual(['workspace.create', 'user.create', 'user.create', 'user.role', 'user.remove']);
  });
});

describe('spend in the current period', () => {
  it("shows a key's and a workspace's spend in their daily cap's current period and when it resets; a new day starts again", async () => {
    clock.at = Date.parse('2026-11-23T22:00:00Z');
    try {
      const ws = (await api('POST', '/workspaces', { body: { name: 'daily-spend', spend_cap: 1, spend_cap_period: 'daily' } })).body;
      expect(ws).toMatchObject({ spent: 0, spent_in_period: 0, period_resets_at: '2026-11-24T00:00:00.000Z' });
      const created = (await api('POST', `/workspaces/${ws.id}/keys`, { body: { spend_cap: 0.05, spend_cap_period: 'daily' } })).body;
      expect(created).toMatchObject({ spent: 0, spent_in_period: 0, period_resets_at: '2026-11-24T00:00:00.000Z' });
      const chat = () => fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${created.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'flat-chat', messages: [{ role: 'user', content: 'hi' }] }) });
      for (let i = 0; i < 2; i++) expect((await chat()).status).toBe(200);
      expect((await api('GET', `/keys/${created.id}`)).body).toMatchObject({ spent: 0.02, spent_in_period: 0.02, period_resets_at: '2026-11-24T00:00:00.000Z' });
      clock.at = Date.parse('2026-11-24T01:00:00Z');
      expect((await chat()).status).toBe(200);
      const inNewDay = { spent: 0.03, spent_in_period: 0.01, period_resets_at: '2026-11-25T00:00:00.000Z' };
      expect((await api('GET', `/workspaces/${ws.id}/keys`)).body.data).toEqual([expect.objectContaining(inNewDay)]);
      expect((await api('GET', `/workspaces/${ws.id}`)).body).toMatchObject(inNewDay);
      expect((await api('GET', '/workspaces')).body.data.find((w: { id: string }) => w.id === ws.id)).toMatchObject(inNewDay);
      // A total cap (or none) shows all time and never resets.
      expect((await api('PATCH', `/keys/${created.id}`, { body: { spend_cap_period: 'total' } })).body).toMatchObject({ spent: 0.03, spent_in_period: 0.03, period_resets_at: null });
      expect((await api('PATCH', `/workspaces/${ws.id}`, { body: { spend_cap: null } })).body).toMatchObject({ spent_in_period: 0.03, period_resets_at: null });
    } finally {
      clock.at = undefined;
    }
  });
});

describe('usage, audit and reload', () => {
  it("reports a workspace's usage by day, model and key", async () => {
    const res = await api('GET', `/workspaces/${gw.workspace.id}/usage?since=2020-01-01`);
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeGreaterThan(0);
    expect(res.body.data[0]).toMatchObject({ model: 'flat-chat', cost: { currency: 'USD' } });
    expect((await api('GET', `/workspaces/${gw.workspace.id}/usage?since=yesterday`)).status).toBe(400);
    expect((await api('GET', `/workspaces/${gw.workspace.id}/usage?colour=red`)).body.error.param).toBe('colour');
  });

  it('lists the audit log newest first, a page at a time and per workspace, and its rows cannot be changed', async () => {
    const first = await api('GET', '/audit?limit=2');
    expect(first.body.data).toHaveLength(2);
    expect(first.body.has_more).toBe(true);
    const next = await api('GET', `/audit?limit=500&before=${first.body.data[1].id}`);
    expect(next.body.data[0].id < first.body.data[1].id).toBe(true);
    const all = (await api('GET', '/audit?limit=500')).body.data as { id: string; workspace_id: string }[];
    expect(all.map((r) => r.id)).toEqual([...all.map((r) => r.id)].sort().reverse());
    const scoped = await api('GET', `/audit?workspace_id=${gw.workspace.id}`);
    expect(scoped.body.data.every((r: { workspace_id: string }) => r.workspace_id === gw.workspace.id)).toBe(true);
    expect((await api('GET', '/audit?limit=0')).status).toBe(400);
    expect((await api('GET', '/audit?before=1')).status).toBe(400);
    await expect(gw.services.db.updateTable('audit_log').set({ action: 'forged' }).where('id', '=', all[0].id).execute()).rejects.toThrow(/append-only/);
  });

  it('reloads the config, refuses a config that does not load with a 400 naming the file, and audits the reload', async () => {
    const ok = await api('POST', '/reload');
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ reloaded: true, summary: expect.stringContaining('channel(s)') });
    writeFileSync(join(gw.dir, 'channels', 'broken.yaml'), 'id: broken\nprotocol: nope\n');
    const refused = await api('POST', '/reload');
    expect([refused.status, refused.body.error.code]).toEqual([400, 'config_invalid']);
    expect(refused.body.error.message).toContain('broken.yaml');
    const reloads = (await auditRows()).filter((r) => r.action === 'config.reload');
    expect(reloads).toHaveLength(1);
    expect(reloads[0]).toMatchObject({ actor_kind: 'admin_token', actor_id: 'ops', workspace_id: null });
  });
});
