// How workspaces and keys narrow the response cache (docs/caching.md), through the admin API and the CLI: off, fewer
// endpoint families, a shorter life (also the oldest answer served), smaller entries; never wider than the route's
// cache:. Requests go through HTTP; every admin answer is checked against the OpenAPI document.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newAdminToken } from '../src/admin/auth.js';
import { issueApiKey } from '../src/auth/keys.js';
import { commands as keyCommands } from '../src/cli/admin/keys.js';
import { createWorkspace, type Workspace } from '../src/store/workspaces.js';
import { adminApi, type AdminApi } from './kit/admin-api.js';
import { EMBEDDING_INPUT, FakeFamilies } from './kit/fake-families.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

const ops = newAdminToken();
let fake: FakeUpstream;
let families: FakeFamilies;
let gw: TestGateway;
let api: AdminApi;
let clock = Date.parse('2026-11-29T00:00:00Z');

const routes = `
- id: cached-chat
  cache: { ttlSeconds: 3600 }
  targets: [{ model: alpha }]
- id: short-chat
  cache: { ttlSeconds: 1 }
  targets: [{ model: alpha }]
- id: plain-chat
  targets: [{ model: alpha }]
- id: cached-embed
  cache: { ttlSeconds: 3600 }
  targets: [{ model: emb }]
- id: embeddings-only
  cache: { ttlSeconds: 3600, families: [embeddings] }
  targets: [{ model: alpha }]
- id: chat-listed
  cache: { ttlSeconds: 3600, families: [chat, embeddings] }
  targets: [{ model: alpha }]
- id: small-entries
  cache: { ttlSeconds: 3600, maxEntryBytes: 64 }
  targets: [{ model: alpha }]
`;

beforeAll(async () => {
  [fake, families] = await Promise.all([FakeUpstream.start(), FakeFamilies.start()]);
  gw = await startGateway({
    channels: {
      a: `id: a\nprotocol: openai-chat\nbaseUrl: ${fake.url}/v1\nmodels:\n  - id: alpha\n    upstream: up-alpha\n    kind: chat\n    price: { inputPerMillion: 1000, outputPerMillion: 2000 }\n`,
      emb: `id: emb\nprotocol: openai-chat\nbaseUrl: ${families.url}/v1\nmodels:\n  - id: emb\n    upstream: text-embedding-3-small\n    kind: embedding\n    price: { inputPerMillion: 1000 }\n`,
    },
    files: { 'routes/cache.yaml': routes },
    extraConfig: `admin:\n  tokens:\n    - id: ops\n      sha256: ${ops.sha256}\n`,
    overrides: { now: () => clock },
    listen: true,
  });
  api = await adminApi(gw.url, ops.token);
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await fake?.close();
  await families?.close();
});
beforeEach(() => {
  fake.reset();
  families.requests.length = 0;
  fake.chat = { text: 'cached words', usage: { prompt_tokens: 10, completion_tokens: 5 } };
});

let unique = 0;
const question = () => `limits question ${++unique}`;
const chatCalls = () => fake.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

const chat = (key: string, model: string, content: string) =>
  gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${key}` }, payload: { model, max_tokens: 8, temperature: 0, messages: [{ role: 'user', content }] } });
const embed = (key: string, input: string) => gw.app.inject({ method: 'POST', url: '/v1/embeddings', headers: { authorization: `Bearer ${key}` }, payload: { model: 'cached-embed', input } });

let workspaces = 0;
/** A workspace of its own for a test, with a key (its id and secret). */
async function freshWorkspace(): Promise<{ workspace: Workspace; key: { id: string; key: string } }> {
  const workspace = await createWorkspace(gw.services.db, `limits-${++workspaces}`);
  return { workspace, key: await issueApiKey(gw.services.db, workspace) };
}

describe('a workspace or key narrows the cache', () => {
  it('starts as the operator set it, and a workspace turned off is a bypass for all its keys (audited)', async () => {
    const { workspace, key } = await freshWorkspace();
    const shown = await api('GET', `/workspaces/${workspace.id}/cache`);
    expect(shown).toEqual({ status: 200, body: { enabled: true, ttlSeconds: null, families: null, maxEntryBytes: null } });
    const set = await api('PUT', `/workspaces/${workspace.id}/cache`, { body: { enabled: false } });
    expect(set.body).toEqual({ enabled: false, ttlSeconds: null, families: null, maxEntryBytes: null });
    const content = question();
    const first = await chat(key.key, 'cached-chat', content);
    const second = await chat(key.key, 'cached-chat', content);
    expect([first.statusCode, second.statusCode]).toEqual([200, 200]);
    expect([first.headers['x-cache'], second.headers['x-cache']]).toEqual(['bypass', 'bypass']);
    expect(chatCalls()).toBe(2);
    const audit = await gw.services.db.selectFrom('audit_log').selectAll().where('action', '=', 'workspace.cache').where('target_id', '=', workspace.id).execute();
    expect(audit).toHaveLength(1);
    // Turned on again (every field as the operator set it): the next repeat is a hit.
    expect((await api('PUT', `/workspaces/${workspace.id}/cache`, { body: {} })).body.enabled).toBe(true);
    await chat(key.key, 'cached-chat', content);
    expect((await chat(key.key, 'cached-chat', content)).headers['x-cache']).toBe('hit');
  });

  it('a key limited to some families caches those only: its chat requests pass as bypass, its embeddings hit', async () => {
    const { key } = await freshWorkspace();
    expect((await api('PUT', `/keys/${key.id}/cache`, { body: { families: ['embeddings'] } })).body.families).toEqual(['embeddings']);
    const content = question();
    await chat(key.key, 'cached-chat', content);
    expect((await chat(key.key, 'cached-chat', content)).headers['x-cache']).toBe('bypass');
    expect(chatCalls()).toBe(2);
    const input = `${EMBEDDING_INPUT} ${question()}`;
    expect((await embed(key.key, input)).headers['x-cache']).toBe('miss');
    expect((await embed(key.key, input)).headers['x-cache']).toBe('hit');
    expect(families.requests.filter((r) => r.path === '/v1/embeddings')).toHaveLength(1);
  });

  it("a key's shorter life bounds what it stores and the oldest answer it is served, whoever stored it; another key of the workspace keeps the route's", async () => {
    const { workspace, key: long } = await freshWorkspace();
    const short = await issueApiKey(gw.services.db, workspace);
    await api('PUT', `/keys/${short.id}/cache`, { body: { ttlSeconds: 30 } });
    const content = question();
    expect((await chat(long.key, 'cached-chat', content)).headers['x-cache']).toBe('miss');
    clock += 45_000;
    // 45 s old: past the short key's 30 s, within the route's hour.
    expect((await chat(short.key, 'cached-chat', content)).headers['x-cache']).toBe('miss');
    expect((await chat(long.key, 'cached-chat', content)).headers['x-cache']).toBe('hit');
    // What a key of a 1 s life stores lives 1 s (the memory store judges it by the services' clock), not the route's hour.
    await api('PUT', `/keys/${short.id}/cache`, { body: { ttlSeconds: 1 } });
    const other = question();
    await chat(short.key, 'cached-chat', other);
    clock += 1100;
    expect((await chat(long.key, 'cached-chat', other)).headers['x-cache']).toBe('miss');
  });

  it('never widens the route: a longer life than the route says does not keep answers longer, a route without cache: stays uncached', async () => {
    const { workspace, key } = await freshWorkspace();
    await api('PUT', `/workspaces/${workspace.id}/cache`, { body: { ttlSeconds: 86_400, families: ['chat', 'embeddings'] } });
    const content = question();
    await chat(key.key, 'short-chat', content);
    // Past the route's 1 s life (the services' clock), within the workspace's day.
    clock += 1100;
    expect((await chat(key.key, 'short-chat', content)).headers['x-cache']).toBe('miss');
    const plain = await chat(key.key, 'plain-chat', content);
    expect(plain.headers['x-cache']).toBeUndefined();
  });

  it('a key narrows further than its workspace, never back: the families both name, the smaller entry', async () => {
    const { workspace, key } = await freshWorkspace();
    await api('PUT', `/workspaces/${workspace.id}/cache`, { body: { families: ['embeddings'] } });
    await api('PUT', `/keys/${key.id}/cache`, { body: { families: ['chat', 'embeddings'], maxEntryBytes: 10 } });
    const content = question();
    await chat(key.key, 'cached-chat', content);
    expect((await chat(key.key, 'cached-chat', content)).headers['x-cache']).toBe('bypass');
    // Embeddings are cached for both, but no answer fits in 10 bytes: each is a miss, none stored.
    const input = `${EMBEDDING_INPUT} ${question()}`;
    await embed(key.key, input);
    expect((await embed(key.key, input)).headers['x-cache']).toBe('miss');
    await api('PUT', `/keys/${key.id}/cache`, { body: { families: ['chat', 'embeddings'] } });
    await embed(key.key, input);
    expect((await embed(key.key, input)).headers['x-cache']).toBe('hit');
  });

  it('refuses a family the catalogue does not serve, an unknown field and a TTL of 0 with a 400 naming it; an unknown key is a 404', async () => {
    const { key } = await freshWorkspace();
    const family = await api('PUT', `/keys/${key.id}/cache`, { body: { families: ['chat', 'telepathy'] } });
    expect(family.status).toBe(400);
    expect(family.body.error.param).toBe('families');
    expect(family.body.error.message).toContain('telepathy');
    const field = await api('PUT', `/keys/${key.id}/cache`, { body: { hitPrice: 0 } });
    expect([field.status, field.body.error.param]).toEqual([400, 'hitPrice']);
    expect((await api('PUT', `/keys/${key.id}/cache`, { body: { ttlSeconds: 0 } })).status).toBe(400);
    expect((await api('GET', '/keys/key_nope/cache')).status).toBe(404);
    expect((await api('GET', `/keys/${key.id}/cache`)).body).toEqual({ enabled: true, ttlSeconds: null, families: null, maxEntryBytes: null });
  });

  it('the CLI shows and sets the same settings, and the next request obeys them', async () => {
    const { workspace, key } = await freshWorkspace();
    const lines: string[] = [];
    const run = (name: string, positionals: string[], values: Record<string, string | boolean>) => keyCommands.find((c) => c.name === name)!.run({ db: gw.services.db, config: gw.services.config, positionals, values, print: (l) => lines.push(l) });
    await run('workspace cache', [], { workspace: workspace.name, ttl: '120', families: 'chat,responses' });
    expect(lines.at(-1)).toBe(`cache for workspace ${workspace.name}: on (as the route says)  ttl<=120s  families=chat,responses`);
    await run('key cache', [key.id], { off: true, json: true });
    expect(JSON.parse(lines.at(-1)!)).toEqual({ enabled: false, ttlSeconds: null, families: null, maxEntryBytes: null });
    const content = question();
    await chat(key.key, 'cached-chat', content);
    expect((await chat(key.key, 'cached-chat', content)).headers['x-cache']).toBe('bypass');
    await run('key cache', [key.id], { reset: true });
    expect(lines.at(-1)).toBe(`cache for key ${key.id}: on (as the route says)`);
    await chat(key.key, 'cached-chat', content);
    expect((await chat(key.key, 'cached-chat', content)).headers['x-cache']).toBe('hit');
  });
});

describe("the route's own narrowing (routes/*.yaml cache:)", () => {
  it('caches only the families it names: a chat request on an embeddings-only route is a bypass, each reaching the upstream; on a route naming chat, a hit', async () => {
    const { key } = await freshWorkspace();
    const content = question();
    const answers = [await chat(key.key, 'embeddings-only', content), await chat(key.key, 'embeddings-only', content)];
    expect(answers.map((a) => [a.statusCode, a.headers['x-cache']])).toEqual([[200, 'bypass'], [200, 'bypass']]);
    expect(chatCalls()).toBe(2);
    await chat(key.key, 'chat-listed', content);
    expect((await chat(key.key, 'chat-listed', content)).headers['x-cache']).toBe('hit');
    expect(chatCalls()).toBe(3);
  });

  it('stores no answer larger than its maxEntryBytes (the next request is a miss again), while a route without one does', async () => {
    const { key } = await freshWorkspace();
    const content = question();
    const first = await chat(key.key, 'small-entries', content);
    expect(first.body.length).toBeGreaterThan(64);
    const again = await chat(key.key, 'small-entries', content);
    expect([first.headers['x-cache'], again.headers['x-cache']]).toEqual(['miss', 'miss']);
    expect(chatCalls()).toBe(2);
    await chat(key.key, 'cached-chat', content);
    expect((await chat(key.key, 'cached-chat', content)).headers['x-cache']).toBe('hit');
  });
});
