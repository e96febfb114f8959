// The dashboard's pages over HTTP: Files paginated and filtered on the server, key management, usage, workspace choice.
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient, addUser, startDashboardGateway } from './kit/dashboard.js';
import type { TestGateway } from './kit/gateway.js';
import type { Workspace } from '../src/store/workspaces.js';
import { storeFile } from '../src/files/index.js';
import { acceptedSamples } from './kit/media-samples.js';
import { hashApiKey } from '../src/auth/keys.js';

let env: Awaited<ReturnType<typeof startDashboardGateway>>;
let gw: TestGateway;
let second: Workspace;
/** Generated file ids, oldest first. */
const generated: string[] = [];

const tileIds = (html: string) => [...html.matchAll(/id="tile-(file_[0-9a-f]+)"/g)].map((m) => m[1]);

beforeAll(async () => {
  env = await startDashboardGateway();
  gw = env.gw;
  second = await gw.newWorkspace('workshop');
  await addUser(gw.services, 'owner@example.com', [[gw.workspace, 'owner'], [second, 'member']]);
  const api = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  for (let i = 0; i < 8; i++) {
    const res = await api.images.generate({ model: 'fake-image', prompt: `batch ${i}`, n: 4 });
    generated.push(...res.data!.map((d) => (d as unknown as { svc_file_id: string }).svc_file_id));
  }
});
afterAll(async () => env.close());

const owner = async () => {
  const client = new DashboardClient(gw.url);
  expect((await client.signIn('owner@example.com')).status).toBe(303);
  return client;
};

describe('Files', () => {
  it('pages newest first on the server, 24 to a page, with a link to the older ones', async () => {
    const client = await owner();
    const first = await client.get('/dashboard/files');
    const newestFirst = [...generated].reverse();
    expect(tileIds(first.html)).toEqual(newestFirst.slice(0, 24));
    const older = /href="(\/dashboard\/files\?before=file_[0-9a-f]+)" rel="next"/.exec(first.html)![1];
    const next = await client.get(older);
    expect(tileIds(next.html)).toEqual(newestFirst.slice(24));
    expect(next.html).not.toContain('rel="next"');
    expect(next.html).toContain('« Newest');
  });

  it('filters by kind: images show, there are no videos yet', async () => {
    const client = await owner();
    expect(tileIds((await client.get('/dashboard/files?kind=image')).html)).toHaveLength(24);
    const videos = await client.get('/dashboard/files?kind=video');
    expect(tileIds(videos.html)).toHaveLength(0);
    expect(videos.html).toContain('No generated media of this kind yet.');
  });

  it('never polls: the page asks for nothing on a timer', async () => {
    const html = (await (await owner()).get('/dashboard/files')).html;
    expect(html).not.toMatch(/hx-trigger="[^"]*every/);
  });

  it("shows a file's size, type, dates, the model and the request that made it, previewed through a signed URL", async () => {
    const client = await owner();
    const id = generated[0];
    const page = await client.get(`/dashboard/files/${id}`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('image/png');
    expect(page.html).toContain('2.0 KiB');
    expect(page.html).toContain('fake-image');
    expect(page.html).toMatch(/Request<\/dt><dd><code>req_[0-9a-f]+<\/code>/);
    const src = new RegExp(`src="(/api/v1/files/${id}/content\\?token=[^"]+)"`).exec(page.html)![1];
    const content = await fetch(`${gw.url}${src.replace(/&amp;/g, '&')}`);
    expect(content.status).toBe(200);
    expect(content.headers.get('content-type')).toBe('image/png');
  });

  it('answers 404 for a malformed file id', async () => {
    const client = await owner();
    expect((await client.get('/dashboard/files/file_%2e%2e%2f')).status).toBe(404);
    expect((await client.get('/dashboard/files/not-a-file')).status).toBe(404);
  });
});

describe('Settings > API keys', () => {
  it('shows a new key once, with its scopes, expiry and cap; the list never shows it again', async () => {
    const client = await owner();
    await client.get('/dashboard/settings/keys');
    const created = await client.post('/dashboard/settings/keys', { name: 'ci', scopes: ['llm.chat', 'files.write'], expires: '30', cap: '25' });
    expect(created.status).toBe(201);
    const key = /id="new-key" readonly value="(sk-gw-[^"]+)"/.exec(created.html)![1];
    const row = await gw.services.db.selectFrom('api_keys').selectAll().where('name', '=', 'ci').executeTakeFirstOrThrow();
    expect(JSON.parse(row.scopes)).toEqual(['llm.chat', 'files.write']);
    expect(row.spend_cap_micros).toBe(25_000_000);
    expect(row.expires_at! - Math.floor(Date.now() / 1000)).toBeGreaterThan(29 * 86_400);
    const list = await client.get('/dashboard/settings/keys');
    expect(list.html).not.toContain(key);
    expect(list.html).toContain(row.prefix);
    expect(list.html).toContain('llm.chat, files.write');
  });

  it('refuses a bad cap, an unknown scope or an expiry off the list with 400 and creates nothing', async () => {
    const client = await owner();
    await client.get('/dashboard/settings/keys');
    const before = (await gw.services.db.selectFrom('api_keys').select('id').execute()).length;
    const bad: Record<string, string>[] = [{ cap: '-3' }, { cap: '1e9' }, { scopes: 'root' }, { expires: '9999' }, { name: 'x'.repeat(101) }];
    for (const fields of bad) {
      const res = await client.post('/dashboard/settings/keys', fields);
      expect(res.status).toBe(400);
      expect(res.html).toContain('class="error"');
    }
    expect((await gw.services.db.selectFrom('api_keys').select('id').execute()).length).toBe(before);
  });

  it('changes and clears a cap, answering htmx with the new row', async () => {
    const client = await owner();
    await client.get('/dashboard/settings/keys');
    const id = (await gw.services.db.selectFrom('api_keys').select('id').where('workspace_id', '=', gw.workspace.id).executeTakeFirstOrThrow()).id;
    const row = await client.post(`/dashboard/settings/keys/${id}/cap`, { cap: '7.25' }, { headers: { 'hx-request': 'true' } });
    expect(row.status).toBe(200);
    expect(row.html.trim()).toMatch(new RegExp(`^<tr id="key-${id}"`));
    expect(row.html).toContain('value="7.25"');
    await client.post(`/dashboard/settings/keys/${id}/cap`, { cap: '' });
    expect((await gw.services.db.selectFrom('api_keys').select('spend_cap_micros').where('id', '=', id).executeTakeFirstOrThrow()).spend_cap_micros).toBeNull();
  });

  it('sets a cap with a period and shows what the key spent in the current period', async () => {
    const client = await owner();
    await client.get('/dashboard/settings/keys');
    // The key that generated every image in this suite: $1.28, all of it today.
    const { id } = await gw.services.db.selectFrom('api_keys').select('id').where('hash', '=', hashApiKey(gw.key)).executeTakeFirstOrThrow();
    const row = await client.post(`/dashboard/settings/keys/${id}/cap`, { cap: '5', period: 'daily' }, { headers: { 'hx-request': 'true' } });
    expect(row.status).toBe(200);
    expect(row.html).toContain('<option value="daily" selected>daily</option>');
    expect(row.html).toContain('<td data-label="Spent">$1.28 today</td>');
    expect(await gw.services.db.selectFrom('api_keys').select(['spend_cap_micros', 'spend_cap_period']).where('id', '=', id).executeTakeFirstOrThrow()).toEqual({ spend_cap_micros: 5_000_000, spend_cap_period: 'daily' });
    expect((await client.post(`/dashboard/settings/keys/${id}/cap`, { cap: '5', period: 'hourly' })).status).toBe(400);
    await client.post(`/dashboard/settings/keys/${id}/cap`, { cap: '', period: 'total' });
    const created = await client.post('/dashboard/settings/keys', { name: 'monthly', cap: '3', period: 'monthly' });
    expect(created.status).toBe(201);
    const monthly = await gw.services.db.selectFrom('api_keys').select('id').where('name', '=', 'monthly').executeTakeFirstOrThrow();
    const newRow = new RegExp(`<tr id="key-${monthly.id}"[\\s\\S]*?</tr>`).exec(created.html)![0];
    expect(newRow).toContain('<option value="monthly" selected>monthly</option>');
    expect(newRow).toContain('<td data-label="Spent">$0.00 this month</td>');
  });

  it('refuses a cap sent twice, as cap[], or not at all with 400 and keeps the cap (issue 27 item 9)', async () => {
    const client = await owner();
    await client.get('/dashboard/settings/keys');
    const id = (await gw.services.db.selectFrom('api_keys').select('id').where('workspace_id', '=', gw.workspace.id).executeTakeFirstOrThrow()).id;
    expect((await client.post(`/dashboard/settings/keys/${id}/cap`, { cap: '3' })).status).toBe(303);
    const capOf = async () => (await gw.services.db.selectFrom('api_keys').select('spend_cap_micros').where('id', '=', id).executeTakeFirstOrThrow()).spend_cap_micros;
    for (const fields of [{ cap: ['1', '2'] }, { 'cap[]': '1' }, { 'cap[0]': '1' }, {}, { cap: ['', ''] }] as Record<string, string | string[]>[]) {
      const res = await client.post(`/dashboard/settings/keys/${id}/cap`, fields, { headers: { 'hx-request': 'true' } });
      expect(res.status).toBe(400);
      expect(Number(await capOf())).toBe(3_000_000);
    }
  });

  it("answers 404 for another workspace's key and leaves it alone", async () => {
    const foreign = await gw.newKey({ workspace: second });
    const row = await gw.services.db.selectFrom('api_keys').selectAll().where('workspace_id', '=', second.id).executeTakeFirstOrThrow();
    const client = await owner();
    await client.get('/dashboard/settings/keys');
    expect((await client.post(`/dashboard/settings/keys/${row.id}/revoke`)).status).toBe(404);
    expect((await client.post(`/dashboard/settings/keys/${row.id}/cap`, { cap: '1' })).status).toBe(404);
    expect((await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${foreign}` } })).status).toBe(200);
  });

  it('revokes a key: the API refuses it at once with 401', async () => {
    const key = await gw.newKey({ name: 'to-revoke' });
    const id = (await gw.services.db.selectFrom('api_keys').select('id').where('name', '=', 'to-revoke').executeTakeFirstOrThrow()).id;
    expect((await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    const client = await owner();
    await client.get('/dashboard/settings/keys');
    expect((await client.post(`/dashboard/settings/keys/${id}/revoke`)).status).toBe(303);
    const refused = await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(refused.status).toBe(401);
    expect((await client.get('/dashboard/settings/keys')).html).toMatch(new RegExp(`id="key-${id}" class="revoked"`));
  });
});

describe('Usage', () => {
  it('totals the last 30 days and breaks them down by model and by key', async () => {
    const page = await (await owner()).get('/dashboard/usage');
    expect(page.status).toBe(200);
    expect(page.html).toContain('$1.28');
    expect(page.html).toContain('<td data-label="Model">fake-image</td><td data-label="Requests">8</td>');
    const prefix = (await gw.services.db.selectFrom('api_keys').select('prefix').where('workspace_id', '=', gw.workspace.id).orderBy('created_at').executeTakeFirstOrThrow()).prefix;
    expect(page.html).toContain(`${prefix}…`);
    expect((page.html.match(/class="bar-rect"/g) ?? []).length).toBe(60);
  });

  it('shows what the workspace spent today, this week and this month, and its cap', async () => {
    const page = await (await owner()).get('/dashboard/usage');
    const section = /<section class="card budget" id="current-periods">([\s\S]*?)<\/section>/.exec(page.html)![1];
    for (const label of ['today', 'this week', 'this month']) expect(section).toContain(`<span class="big">$1.28</span><span>${label}</span>`);
    expect(section).toContain('Periods follow the UTC calendar');
    expect(section).toContain('Workspace spending cap: none.');
  });

  it('shows the requests the response cache answered and what they saved', async () => {
    const key = await gw.services.db.selectFrom('api_keys').select('id').where('workspace_id', '=', gw.workspace.id).orderBy('created_at').executeTakeFirstOrThrow();
    // A free hit as the cache books it (src/cache/hit.ts): cost 0, its saving in the price it records.
    await gw.services.db
      .insertInto('usage_ledger')
      .values({ request_id: 'req_hit_1', workspace_id: gw.workspace.id, key_id: key.id, model: 'cached-model', channel: 'c', kind: 'cache_hit', input_tokens: 0, output_tokens: 0, cached_input_tokens: 0, units: 0, cost_micros: 0, currency: 'USD', price: JSON.stringify({ currency: 'USD', savedMicros: 250_000 }), created_at: Math.floor(Date.now() / 1000), reservation_id: 'res_hit_1' })
      .execute();
    const page = await (await owner()).get('/dashboard/usage');
    expect(page.html).toContain('<div id="cache-hits"><span class="big">1</span>');
    expect(page.html).toContain('<div id="cache-saved"><span class="big">$0.25</span>');
    expect(page.html).toContain('<td data-label="Model">cached-model</td><td data-label="Requests">1</td>');
    expect(page.html).toMatch(/<td data-label="Cache hits">1<\/td><td data-label="Saved">0\.25 USD<\/td>/);
  });
});

describe('workspaces', () => {
  it('switches to another workspace of the user, with that workspace’s role', async () => {
    const client = await owner();
    const files = await client.get('/dashboard/files');
    expect(files.html).toContain('owner@example.com · owner');
    await client.post('/dashboard/workspace', { workspace: second.id });
    const switched = await client.get('/dashboard/files');
    expect(switched.html).toContain('owner@example.com · member');
    expect(tileIds(switched.html)).toHaveLength(0);
    expect((await client.get('/dashboard/settings/keys')).status).toBe(403);
  });
});

describe('caching', () => {
  it('marks pages no-store', async () => {
    const page = await (await owner()).get('/dashboard/settings/keys');
    expect(page.headers.get('cache-control')).toBe('no-store');
  });
});

describe('generated videos', () => {
  // The video pipeline archives its results as video_generation files; this stores one the way it will.
  it('plays a generated video through its signed URL, shows its task, and filters it by kind', async () => {
    const sample = acceptedSamples.find((s) => s.name === 'video.mp4')!;
    const row = await storeFile(gw.services, { workspaceId: gw.workspace.id, stream: sample.bytes, filename: 'video-task_abc-0', purpose: 'video_generation', source: 'generated', model: 'fake-video', taskId: 'task_abc' });
    const client = await owner();
    const videos = await client.get('/dashboard/files?kind=video');
    expect(tileIds(videos.html)).toEqual([row.id]);
    expect(videos.html).toMatch(new RegExp(`<video src="/api/v1/files/${row.id}/content\\?token=[^"]+" preload="metadata"`));
    expect(tileIds((await client.get('/dashboard/files?kind=image')).html)).not.toContain(row.id);
    const page = await client.get(`/dashboard/files/${row.id}`);
    expect(page.html).toMatch(/<video src="[^"]+" controls/);
    expect(page.html).toContain('<dt>Task</dt><dd><code>task_abc</code>');
    expect(page.html).toContain('fake-video');
    expect(page.html).toContain('video/mp4');
  });

  // An operator's own task family (catalogue `purpose: music_generation`, test/task-families) archives audio: the page
  // lists whatever a family archived, by media type, not a closed list of families.
  it("lists an operator family's archived audio under Audio, with a player, and not under images or videos", async () => {
    const sample = acceptedSamples.find((s) => s.name === 'audio.mp3')!;
    const row = await storeFile(gw.services, { workspaceId: gw.workspace.id, stream: sample.bytes, filename: 'music-task_def-0', purpose: 'music_generation', source: 'generated', model: 'fake-music', taskId: 'task_def' });
    const client = await owner();
    const audio = await client.get('/dashboard/files?kind=audio');
    expect(tileIds(audio.html)).toEqual([row.id]);
    expect(audio.html).toMatch(new RegExp(`<audio src="/api/v1/files/${row.id}/content\\?token=[^"]+" preload="none" controls>`));
    expect(tileIds((await client.get('/dashboard/files?kind=image')).html)).not.toContain(row.id);
    expect(tileIds((await client.get('/dashboard/files?kind=video')).html)).not.toContain(row.id);
    expect(tileIds((await client.get('/dashboard/files')).html)).toContain(row.id);
    const page = await client.get(`/dashboard/files/${row.id}`);
    expect(page.html).toMatch(/<audio src="[^"]+" controls/);
    expect(page.html).toContain('audio/mpeg');
  });
});
