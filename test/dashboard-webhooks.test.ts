// Settings > Webhooks over HTTP: owners and admins add an endpoint (its secret shown once) and delete one; members
// neither see nor reach the page; a private address is refused; each change is audited as the user who made it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, addUser, startDashboardGateway } from './kit/dashboard.js';
import type { TestGateway } from './kit/gateway.js';
import type { Workspace } from '../src/store/workspaces.js';

let env: Awaited<ReturnType<typeof startDashboardGateway>>;
let gw: TestGateway;
let other: Workspace;

beforeAll(async () => {
  env = await startDashboardGateway();
  gw = env.gw;
  other = await gw.newWorkspace('elsewhere');
  await addUser(gw.services, 'owner@example.com', [[gw.workspace, 'owner']]);
  await addUser(gw.services, 'admin@example.com', [[gw.workspace, 'admin']]);
  await addUser(gw.services, 'member@example.com', [[gw.workspace, 'member']]);
  await addUser(gw.services, 'stranger@example.com', [[other, 'owner']]);
});
afterAll(async () => env.close());

async function signedIn(email: string): Promise<DashboardClient> {
  const client = new DashboardClient(gw.url);
  expect((await client.signIn(email)).status).toBe(303);
  return client;
}
const endpoints = (workspaceId = gw.workspace.id) => gw.services.db.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', workspaceId).execute();

describe('Settings > Webhooks', () => {
  it('adds an endpoint and shows its secret once; the list never shows it again', async () => {
    const client = await signedIn('owner@example.com');
    const empty = await client.get('/dashboard/settings/webhooks');
    expect(empty.status).toBe(200);
    expect(empty.html).toContain('No endpoints yet.');
    const created = await client.post('/dashboard/settings/webhooks', { url: 'https://hooks.example.com/gateway', events: ['video.completed', 'video.failed'] });
    expect(created.status).toBe(201);
    const secret = /id="new-secret" readonly value="(whsec_[^"]+)"/.exec(created.html)![1];
    const [row] = await endpoints();
    expect(row).toMatchObject({ url: 'https://hooks.example.com/gateway', secret, enabled: 1 });
    expect(JSON.parse(row.events)).toEqual(['video.completed', 'video.failed']);
    const list = await client.get('/dashboard/settings/webhooks');
    expect(list.html).not.toContain(secret);
    expect(list.html).toContain('https://hooks.example.com/gateway');
    expect(list.html).toContain('video.completed, video.failed');
    const audit = await gw.services.db.selectFrom('audit_log').selectAll().where('target_id', '=', row.id).execute();
    expect(audit.map((a) => [a.action, a.actor_kind])).toEqual([['webhook.create', 'user']]);
  });

  it('refuses a private address or plain http with 400 and adds nothing', async () => {
    const client = await signedIn('admin@example.com');
    await client.get('/dashboard/settings/webhooks');
    const before = (await endpoints()).length;
    for (const url of ['https://10.0.0.8/hooks', 'http://hooks.example.com/x', 'not a url']) {
      const res = await client.post('/dashboard/settings/webhooks', { url });
      expect(res.status).toBe(400);
      expect(res.html).toContain('class="error"');
    }
    expect((await endpoints()).length).toBe(before);
  });

  it('deletes an endpoint (htmx answers with nothing to swap in); another workspace\'s id is 404', async () => {
    const client = await signedIn('admin@example.com');
    await client.get('/dashboard/settings/webhooks');
    await client.post('/dashboard/settings/webhooks', { url: 'https://hooks.example.com/to-delete' });
    const id = (await endpoints()).find((e) => e.url === 'https://hooks.example.com/to-delete')!.id;
    const stranger = await signedIn('stranger@example.com');
    await stranger.get('/dashboard/settings/webhooks');
    expect((await stranger.post(`/dashboard/settings/webhooks/${id}/delete`, {})).status).toBe(404);
    const res = await client.post(`/dashboard/settings/webhooks/${id}/delete`, {}, { headers: { 'hx-request': 'true' } });
    expect(res.status).toBe(200);
    expect(res.html).toBe('');
    expect((await endpoints()).some((e) => e.id === id)).toBe(false);
  });

  it('is neither linked nor served to members', async () => {
    const client = await signedIn('member@example.com');
    const files = await client.get('/dashboard/files');
    expect(files.html).not.toContain('/dashboard/settings/webhooks');
    expect((await client.get('/dashboard/settings/webhooks')).status).toBe(403);
    const owner = await signedIn('owner@example.com');
    expect((await owner.get('/dashboard/files')).html).toContain('href="/dashboard/settings/webhooks"');
  });
});
