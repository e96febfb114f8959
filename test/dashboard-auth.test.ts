// The dashboard over HTTP: sign-in and sessions, CSRF on every form, rate-limited failures, roles, and workspace isolation.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, addUser, startDashboardGateway, PASSWORD } from './kit/dashboard.js';
import type { TestGateway } from './kit/gateway.js';
import { png } from './kit/media-samples.js';
import type { Workspace } from '../src/store/workspaces.js';

let env: Awaited<ReturnType<typeof startDashboardGateway>>;
let gw: TestGateway;
let other: Workspace;
let imageId: string;
let uploadId: string;
let otherImageId: string;

async function generateImage(key: string): Promise<string> {
  const client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  const res = await client.images.generate({ model: 'fake-image', prompt: 'a lighthouse' });
  return (res.data![0] as unknown as { svc_file_id: string }).svc_file_id;
}

beforeAll(async () => {
  env = await startDashboardGateway();
  gw = env.gw;
  other = await gw.newWorkspace('other');
  await addUser(gw.services, 'owner@example.com', [[gw.workspace, 'owner']]);
  await addUser(gw.services, 'admin@example.com', [[gw.workspace, 'admin']]);
  await addUser(gw.services, 'member@example.com', [[gw.workspace, 'member']]);
  await addUser(gw.services, 'outsider@example.com', [[other, 'owner']]);
  imageId = await generateImage(gw.key);
  otherImageId = await generateImage(await gw.newKey({ workspace: other }));
  const client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  uploadId = (await client.files.create({ file: await toFile(png(512), 'reference.png', { type: 'image/png' }), purpose: 'vision' })).id;
});
afterAll(async () => env.close());

const signedIn = async (email: string) => {
  const client = new DashboardClient(gw.url);
  const res = await client.signIn(email);
  expect(res.status).toBe(303);
  expect(res.location).toBe('/dashboard/files');
  return client;
};

describe('signing in', () => {
  it('sends a visitor without a session to the sign-in page', async () => {
    const res = await new DashboardClient(gw.url).get('/dashboard/files');
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/login');
    expect((await new DashboardClient(gw.url).get('/dashboard')).location).toBe('/dashboard/files');
  });

  it('signs in with the right password and sets a secure-session cookie that is HTTP-only and same-site strict', async () => {
    const client = new DashboardClient(gw.url);
    await client.get('/dashboard/login');
    const res = await client.post('/dashboard/login', { email: 'Owner@Example.com ', password: PASSWORD });
    expect(res.status).toBe(303);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('gw_dashboard='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    // Site-wide, so an owner's session also reaches the admin API at /admin/v1.
    expect(cookie).toMatch(/Path=\/(;|$)/);
    expect((await client.get('/dashboard/files')).status).toBe(200);
  });

  it('refuses a wrong password with 401 and the same words as an unknown email', async () => {
    const client = new DashboardClient(gw.url);
    await client.get('/dashboard/login');
    const wrong = await client.post('/dashboard/login', { email: 'admin@example.com', password: 'not the password' });
    const unknown = await client.post('/dashboard/login', { email: 'nobody@example.com', password: 'not the password' });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.html).toContain('Wrong email or password.');
    expect(unknown.html).toContain('Wrong email or password.');
    expect((await client.get('/dashboard/files')).status).toBe(303);
  });

  it('rate limits failed sign-ins for an email with 429 and retry-after, even with the right password', async () => {
    await addUser(gw.services, 'target@example.com', [[gw.workspace, 'member']]);
    const client = new DashboardClient(gw.url);
    await client.get('/dashboard/login');
    for (let i = 0; i < 5; i++) expect((await client.post('/dashboard/login', { email: 'target@example.com', password: `guess number ${i}` })).status).toBe(401);
    const limited = await client.post('/dashboard/login', { email: 'target@example.com', password: PASSWORD });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another account is not locked by these failures.
    expect((await new DashboardClient(gw.url).signIn('admin@example.com')).status).toBe(303);
  });

  it('signs out: the old cookie no longer opens a page, even replayed', async () => {
    const client = await signedIn('member@example.com');
    const saved = new Map(client.cookies);
    await client.get('/dashboard/files');
    expect((await client.post('/dashboard/logout')).location).toBe('/dashboard/login');
    const replay = new DashboardClient(gw.url);
    for (const [k, v] of saved) replay.cookies.set(k, v);
    expect((await replay.get('/dashboard/files')).status).toBe(303);
  });

  it('ends an expired session: the page sends the browser back to sign in', async () => {
    const client = await signedIn('member@example.com');
    expect((await client.get('/dashboard/files')).status).toBe(200);
    // Twelve hours pass: the stored session's expiry is now behind us.
    await gw.services.db.updateTable('user_sessions').set({ expires_at: Math.floor(Date.now() / 1000) - 1 }).execute();
    const action = await client.post(`/dashboard/files/${imageId}/delete`, {}, { headers: { 'hx-request': 'true' } });
    expect(action.status).toBe(401);
    expect(action.headers.get('hx-redirect')).toBe('/dashboard/login');
    const res = await client.get('/dashboard/files');
    expect(res.status).toBe(303);
    expect(res.location).toBe('/dashboard/login');
  });

  it('refuses a cookie that was tampered with', async () => {
    const client = await signedIn('member@example.com');
    const value = client.cookies.get('gw_dashboard')!;
    client.cookies.set('gw_dashboard', value.slice(0, -4) + (value.endsWith('AAAA') ? 'BBBB' : 'AAAA'));
    expect((await client.get('/dashboard/files')).status).toBe(303);
  });
});

describe('CSRF', () => {
  it('refuses a sign-in form without its token with 403', async () => {
    const client = new DashboardClient(gw.url);
    await client.get('/dashboard/login');
    const res = await client.post('/dashboard/login', { email: 'owner@example.com', password: PASSWORD }, { csrf: null });
    expect(res.status).toBe(403);
  });

  it('refuses an action with a missing or foreign token with 403 and changes nothing', async () => {
    const owner = await signedIn('owner@example.com');
    const stranger = new DashboardClient(gw.url);
    await stranger.get('/dashboard/login');
    await owner.get('/dashboard/files');
    expect((await owner.post(`/dashboard/files/${imageId}/delete`, {}, { csrf: null })).status).toBe(403);
    expect((await owner.post(`/dashboard/files/${imageId}/delete`, {}, { csrf: stranger.csrf })).status).toBe(403);
    expect((await owner.post('/dashboard/settings/keys', { name: 'csrf' }, { csrf: 'forged' })).status).toBe(403);
    expect((await owner.get(`/dashboard/files/${imageId}`)).status).toBe(200);
  });

  it('accepts the token in the x-csrf-token header, as htmx sends it', async () => {
    const owner = await signedIn('owner@example.com');
    await owner.get('/dashboard/settings/keys');
    const res = await owner.post('/dashboard/settings/keys', { name: 'from-htmx' }, { csrf: null, headers: { 'x-csrf-token': owner.csrf } });
    expect(res.status).toBe(201);
  });
});

describe('headers', () => {
  it('sends a CSP without inline script, and frame and sniffing protection', async () => {
    const res = await new DashboardClient(gw.url).get('/dashboard/login');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  });

  it('serves htmx from the package, not a CDN', async () => {
    const res = await fetch(`${gw.url}/dashboard/assets/htmx/htmx.min.js`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('htmx');
    expect((await fetch(`${gw.url}/dashboard/assets/htmx/htmx.js`)).status).toBe(404);
  });

  it('leaves the API as it was: /v1 routes still want a key and answer JSON errors', async () => {
    const res = await fetch(`${gw.url}/v1/models`);
    expect(res.status).toBe(401);
    expect(res.headers.get('content-security-policy')).toBeNull();
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('missing_api_key');
  });
});

describe('roles', () => {
  it('shows a member generated images, without delete buttons, and refuses a forged delete with 403', async () => {
    const member = await signedIn('member@example.com');
    const page = await member.get('/dashboard/files');
    expect(page.html).toContain(imageId);
    expect(page.html).not.toContain('/delete');
    expect((await member.post(`/dashboard/files/${imageId}/delete`)).status).toBe(403);
    expect((await member.get(`/dashboard/files/${imageId}`)).status).toBe(200);
  });

  it('keeps Settings > API keys from a member: 403 for the page and for every action', async () => {
    const member = await signedIn('member@example.com');
    await member.get('/dashboard/files');
    expect((await member.get('/dashboard/settings/keys')).status).toBe(403);
    expect((await member.post('/dashboard/settings/keys', { name: 'x' })).status).toBe(403);
    expect((await member.post(`/dashboard/settings/keys/${(await gw.services.db.selectFrom('api_keys').select('id').executeTakeFirstOrThrow()).id}/revoke`)).status).toBe(403);
  });

  it('lets an admin see the keys page and delete files', async () => {
    const admin = await signedIn('admin@example.com');
    expect((await admin.get('/dashboard/settings/keys')).status).toBe(200);
    const doomed = await generateImage(gw.key);
    await admin.get('/dashboard/files');
    expect((await admin.post(`/dashboard/files/${doomed}/delete`)).status).toBe(303);
    expect((await admin.get(`/dashboard/files/${doomed}`)).status).toBe(404);
    const api = await fetch(`${gw.url}/v1/files/${doomed}`, { headers: { authorization: `Bearer ${gw.key}` } });
    expect(api.status).toBe(404);
  });
});

describe('what a session sees', () => {
  it('lists generated images but not uploads', async () => {
    const owner = await signedIn('owner@example.com');
    const page = await owner.get('/dashboard/files');
    expect(page.html).toContain(imageId);
    expect(page.html).not.toContain(uploadId);
    expect((await owner.get(`/dashboard/files/${uploadId}`)).status).toBe(404);
    expect((await owner.post(`/dashboard/files/${uploadId}/delete`)).status).toBe(404);
  });

  it("never shows or deletes another workspace's files", async () => {
    const owner = await signedIn('owner@example.com');
    expect((await owner.get('/dashboard/files')).html).not.toContain(otherImageId);
    expect((await owner.get(`/dashboard/files/${otherImageId}`)).status).toBe(404);
    expect((await owner.post(`/dashboard/files/${otherImageId}/delete`)).status).toBe(404);
    const outsider = await signedIn('outsider@example.com');
    const page = await outsider.get('/dashboard/files');
    expect(page.html).toContain(otherImageId);
    expect(page.html).not.toContain(imageId);
  });

  it('cannot switch to a workspace the user is not a member of', async () => {
    const outsider = await signedIn('outsider@example.com');
    await outsider.get('/dashboard/files');
    await outsider.post('/dashboard/workspace', { workspace: gw.workspace.id });
    expect((await outsider.get('/dashboard/files')).html).not.toContain(imageId);
  });
});
