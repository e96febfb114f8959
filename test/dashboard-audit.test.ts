// The audit log from the dashboard's side and the CLI's: the dashboard's own key and file actions write rows, the owners'
// Settings > Audit log page lists them (admins and members are kept out), and CLI commands are recorded as the CLI.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commands as auditCommands } from '../src/cli/admin/audit.js';
import { commands as billingCommands } from '../src/cli/admin/billing.js';
import { commands as keyCommands } from '../src/cli/admin/keys.js';
import { commands as userCommands } from '../src/cli/admin/users.js';
import { createPasswordLink } from '../src/auth/password-links.js';
import { DashboardClient, addUser, startDashboardGateway } from './kit/dashboard.js';
import type { TestGateway } from './kit/gateway.js';

let env: Awaited<ReturnType<typeof startDashboardGateway>>;
let gw: TestGateway;
let fileId: string;

beforeAll(async () => {
  env = await startDashboardGateway();
  gw = env.gw;
  await addUser(gw.services, 'owner@example.com', [[gw.workspace, 'owner']]);
  await addUser(gw.services, 'admin@example.com', [[gw.workspace, 'admin']]);
  const api = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const res = await api.images.generate({ model: 'fake-image', prompt: 'a picture' });
  fileId = (res.data![0] as unknown as { svc_file_id: string }).svc_file_id;
});
afterAll(async () => env.close());

const cli = (name: string, positionals: string[], values: Record<string, string | boolean> = {}) => {
  const lines: string[] = [];
  const command = [...keyCommands, ...billingCommands, ...userCommands, ...auditCommands].find((c) => c.name === name)!;
  return command.run({ db: gw.services.db, config: gw.services.config, positionals, values, print: (l) => lines.push(l) }).then(() => lines);
};

describe('the audit log of dashboard actions', () => {
  it("records an admin's key create, cap change and revoke and a file delete, and lists them on the owners' page only", async () => {
    const admin = new DashboardClient(gw.url);
    await admin.signIn('admin@example.com');
    await admin.get('/dashboard/settings/keys');
    const created = await admin.post('/dashboard/settings/keys', { name: 'audited', cap: '5.00' });
    expect(created.status).toBe(201);
    const keyId = /id="key-(key_[0-9a-f]+)"/.exec(created.html)?.[1] ?? (await gw.services.db.selectFrom('api_keys').select('id').where('name', '=', 'audited').executeTakeFirstOrThrow()).id;
    expect((await admin.post(`/dashboard/settings/keys/${keyId}/cap`, { cap: '7.50' })).status).toBe(303);
    expect((await admin.post(`/dashboard/settings/keys/${keyId}/revoke`)).status).toBe(303);
    await admin.get('/dashboard/files');
    expect((await admin.post(`/dashboard/files/${fileId}/delete`)).status).toBe(303);
    expect((await admin.get('/dashboard/settings/audit')).status).toBe(403);

    const rows = await gw.services.db.selectFrom('audit_log').selectAll().where('workspace_id', '=', gw.workspace.id).orderBy('id').execute();
    expect(rows.map((r) => r.action)).toEqual(['key.create', 'key.cap', 'key.revoke', 'file.delete']);
    const adminId = (await gw.services.db.selectFrom('users').select('id').where('email', '=', 'admin@example.com').executeTakeFirstOrThrow()).id;
    expect(rows.every((r) => r.actor_kind === 'user' && r.actor_id === adminId && r.address === '127.0.0.1')).toBe(true);
    expect([JSON.parse(rows[1].before!).spend_cap, JSON.parse(rows[1].after!).spend_cap]).toEqual([5, 7.5]);
    expect(JSON.parse(rows[3].before!)).toMatchObject({ purpose: expect.any(String), model: 'fake-image' });
    expect(rows[3].after).toBeNull();

    const owner = new DashboardClient(gw.url);
    await owner.signIn('owner@example.com');
    const page = await owner.get('/dashboard/settings/audit');
    expect(page.status).toBe(200);
    expect(page.html).toContain('Settings › Audit log');
    for (const action of ['key.create', 'key.cap', 'key.revoke', 'file.delete']) expect(page.html).toContain(`<code>${action}</code>`);
    expect(page.html).toContain('admin@example.com');
    expect(page.html).toContain(fileId);
    expect(page.html.indexOf('file.delete')).toBeLessThan(page.html.indexOf('key.create'));
  });
});

describe('sign-up and passwords through a one-time link', () => {
  it('audits a sign-up as the new user, with its workspace and role, and a password set through a link', async () => {
    const signUpToken = await createPasswordLink(gw.services.db, { workspaceId: gw.workspace.id, role: 'admin' }, 3600);
    const client = new DashboardClient(gw.url);
    expect((await client.get(`/dashboard/setup?token=${signUpToken}`)).status).toBe(200);
    const done = await client.post('/dashboard/setup', { token: signUpToken, email: 'Signed.Up@example.com', password: 'a long enough password', confirm: 'a long enough password' });
    expect(done.status).toBe(303);
    const user = await gw.services.db.selectFrom('users').selectAll().where('email', '=', 'signed.up@example.com').executeTakeFirstOrThrow();
    const rows = () => gw.services.db.selectFrom('audit_log').selectAll().where('target_id', '=', user.id).orderBy('id').execute();
    const [signUp] = await rows();
    expect(signUp).toMatchObject({ action: 'user.sign_up', actor_kind: 'user', actor_id: user.id, workspace_id: gw.workspace.id, address: '127.0.0.1', before: null });
    expect(JSON.parse(signUp.after!)).toEqual({ email: 'signed.up@example.com', role: 'admin' });
    // A spent link writes nothing more.
    expect((await new DashboardClient(gw.url).get(`/dashboard/setup?token=${signUpToken}`)).status).toBe(404);

    const resetToken = await createPasswordLink(gw.services.db, { userId: user.id }, 3600);
    const again = new DashboardClient(gw.url);
    await again.get(`/dashboard/setup?token=${resetToken}`);
    expect((await again.post('/dashboard/setup', { token: resetToken, password: 'another long password', confirm: 'another long password' })).status).toBe(303);
    expect((await rows()).map((r) => [r.action, r.actor_id, r.workspace_id])).toEqual([
      ['user.sign_up', user.id, gw.workspace.id],
      ['user.password', user.id, null],
    ]);
    for (const r of await rows()) expect(`${r.before}${r.after}`).not.toMatch(/long password|\$scrypt|scrypt/);
  });
});

describe('the CLI as a client of the admin service', () => {
  it('records its changes as the CLI, and changes scopes and expiry of a key', async () => {
    const [created] = (await cli('key create', [], { workspace: 'test', json: true })).map((l) => JSON.parse(l) as { id: string; key: string });
    expect(await cli('key update', [created.id], { scopes: 'llm.chat', 'expires-in': '2d' })).toEqual([expect.stringMatching(new RegExp(`^key ${created.id}: scopes llm.chat, expires 20`))]);
    expect(await cli('key update', [created.id], { scopes: 'all', 'expires-in': 'never' })).toEqual([`key ${created.id}: scopes all, expires never`]);
    await expect(cli('key update', [created.id], {})).rejects.toThrow(/needs --spend-cap, --period, --scopes or --expires-in/);
    expect(await cli('user create', [], { email: 'new@example.com', workspace: 'test', role: 'member' })).toEqual([
      'created user new@example.com: member of workspace test',
      'one-time link for new@example.com to set a password (valid 24 hours):',
      expect.stringMatching(/\/dashboard\/setup\?token=/),
    ]);
    expect(await cli('user list', [], { workspace: 'test' })).toContainEqual(expect.stringMatching(/new@example\.com {2}member {2}\(no password yet\)$/));
    expect(await cli('user remove', [], { email: 'new@example.com', workspace: 'test' })).toEqual(['removed new@example.com from workspace test']);
    const page = JSON.parse((await cli('audit', [], { workspace: 'test', limit: '5', json: true }))[0]) as { data: { action: string; actor: { kind: string } }[] };
    expect(page.data.map((r) => r.action)).toEqual(['user.remove', 'user.create', 'key.update', 'key.update', 'key.create']);
    // The one-time link is recorded (not the token), under no workspace.
    const link = (await gw.services.db.selectFrom('audit_log').selectAll().where('action', '=', 'user.password_link').execute())[0];
    expect(JSON.parse(link.after!)).toEqual({ email: 'new@example.com', valid_hours: 24 });
    expect(page.data.every((r) => r.actor.kind === 'cli')).toBe(true);
    const token = await cli('admin-token create', [], { id: 'ops' });
    expect(token[0]).toMatch(/^admin token ops: gwadm_[A-Za-z0-9_-]{43}$/);
    expect(token[2]).toMatch(/^ {2}- id: ops\n {4}sha256: [0-9a-f]{64}$/);
  });
});
