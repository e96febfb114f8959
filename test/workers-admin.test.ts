// Admin changes on a gateway of two worker processes sharing one SQLite file: the admin API's reload reaches every
// worker and counts them; concurrent webhook registrations in both workers answer 201 or 400, never 500; the admin
// CLI's writes wait for the database while the gateway is busy writing, instead of failing with SQLITE_BUSY.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAdminToken } from '../src/admin/auth.js';
import { openSqlite } from '../src/store/database.js';
import { openConfiguredDatabase } from '../src/store/open.js';
import { loadOperatorConfig } from '../src/config/operator.js';
import { commands as keyCommands } from '../src/cli/admin/keys.js';
import { commands as webhookCommands } from '../src/cli/admin/webhooks.js';
import { issueApiKey } from '../src/auth/keys.js';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { chatChannel, testModels } from './kit/gateway.js';
import { killTree, spawnTwoWorkers, type GatewayProcess } from './kit/process.js';

const dir = mkdtempSync(join(tmpdir(), 'gateway-workers-admin-'));
const ops = newAdminToken();
let gateway: GatewayProcess;
let upstream: FakeUpstream;
let url: string;
let key: string;
let workspaceId: string;

const completion = { id: 'chatcmpl-r', object: 'chat.completion', created: 1, model: 'upstream-chat', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } };
const addedModel = testModels.flatChat.replace('id: flat-chat', 'id: added-chat');

beforeAll(async () => {
  upstream = await FakeUpstream.start();
  upstream.route(async (req, res) => {
    if (!req.path.endsWith('/chat/completions')) return false;
    json(res, 200, completion);
    return true;
  });
  ({ gateway, url } = await spawnTwoWorkers(dir, `${upstream.url}/v1`, `admin:\n  tokens:\n    - id: ops\n      sha256: ${ops.sha256}\n`));
  const database = await openSqlite(join(dir, 'data', 'gateway.db'));
  const workspace = await database.db.selectFrom('workspaces').select(['id', 'name']).where('name', '=', 'default').executeTakeFirstOrThrow();
  workspaceId = workspace.id;
  key = (await issueApiKey(database.db, workspace as never, { spendCapMicros: 1e12 })).key;
  await database.close();
}, 120_000);

afterAll(async () => {
  killTree(gateway);
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Each call on its own connection: the cluster hands connections to the workers in turn. */
const fresh = () => ({ authorization: `Bearer ${key}`, connection: 'close' });
const chat = (model: string) =>
  fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { ...fresh(), 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }) }).then(async (r) => (await r.arrayBuffer(), r.status));
const admin = (method: string, path: string, body?: unknown) =>
  fetch(`${url}/admin/v1${path}`, { method, headers: { authorization: `Bearer ${ops.token}`, connection: 'close', ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined }).then(async (r) => ({ status: r.status, body: (await r.text()) || undefined }));

describe('POST /admin/v1/reload with server.workers: 2', () => {
  it('swaps the config in every worker: a channel added is served on every fresh connection, listed by /v1/models, and the answer counts two workers', async () => {
    const listed = () => fetch(`${url}/v1/models`, { headers: fresh() }).then(async (r) => ((await r.json()) as { data: { id: string }[] }).data.map((m) => m.id));
    expect(await listed()).not.toContain('added-chat');
    writeFileSync(join(dir, 'channels', 'added.yaml'), chatChannel('added', `${upstream.url}/v1`, { models: addedModel }));
    const reload = await admin('POST', '/reload');
    expect(reload.status).toBe(200);
    expect(JSON.parse(reload.body!)).toMatchObject({ reloaded: true, workers: 2, workers_total: 2 });

    const statuses = await Promise.all(Array.from({ length: 8 }, () => chat('added-chat')));
    expect(statuses).toEqual(Array(8).fill(200));
    for (let i = 0; i < 4; i++) expect(await listed()).toContain('added-chat');
    // Said once for the group: the worker that took the request says what changed; the other reloads quietly (issue 49).
    expect(gateway.lines.filter((l) => /"msg":"reloaded /.test(l) && l.includes('"level":30'))).toHaveLength(1);
  });
});

describe('admin writes from both workers and the CLI at once', () => {
  it('answers 40 concurrent webhook registrations with 201 or 400 only, and registers exactly the limit of 20', async () => {
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => admin('POST', `/workspaces/${workspaceId}/webhooks`, { url: `https://hooks.example.com/${i}` })));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s !== 201 && s !== 400), answers.find((a) => a.status >= 500)?.body).toEqual([]);
    expect(statuses.filter((s) => s === 201)).toHaveLength(20);
    expect(answers.filter((a) => a.status === 400).every((a) => a.body!.includes('too_many_webhooks'))).toBe(true);
  });

  it('lets the admin CLI (`key create`, `webhook create`) write while the gateway writes under load, waiting instead of failing with SQLITE_BUSY', async () => {
    expect((await admin('POST', '/workspaces', { name: 'cli-writes' })).status).toBe(201);
    // The CLI's own path: the operator config, the configured database, the commands as `npm run admin --` runs them.
    const config = loadOperatorConfig(join(dir, 'config.yaml'));
    const database = await openConfiguredDatabase(config);
    const cli = async (name: string, values: Record<string, string>, positionals: string[] = []) => {
      const printed: string[] = [];
      await [...keyCommands, ...webhookCommands].find((c) => c.name === name)!.run({ db: database.db, config, values, positionals, print: (line) => printed.push(line) });
      return printed;
    };
    const loaded = (await admin('POST', `/workspaces/${workspaceId}/keys`, { name: 'loaded' })).body!;
    const loadedKey = (JSON.parse(loaded) as { id: string }).id;
    let loading = true;
    let loadWrites = 0;
    let progressed = () => {};
    /** Resolves once the load has written `n` more times: the CLI's writes interleave with the gateway's, not starve them. */
    const loadProgress = (n: number) => {
      const target = loadWrites + n;
      return new Promise<void>((resolve) => (progressed = () => loadWrites >= target && resolve()));
    };
    // Writes in both workers the whole time (on kept-alive connections): charged calls, and a key renamed over and over.
    const load = Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        for (let n = 0; loading; n++) {
          if (i % 3) await fetch(`${url}/admin/v1/keys/${loadedKey}`, { method: 'PATCH', headers: { authorization: `Bearer ${ops.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: `renamed ${i} ${n}` }) }).then((r) => r.arrayBuffer());
          else await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'flat-chat', messages: [{ role: 'user', content: 'hi' }] }) }).then((r) => r.arrayBuffer());
          loadWrites++;
          progressed();
        }
      }),
    );
    const failures: string[] = [];
    try {
      // Until the gateway has written 200 times, each CLI write between two of its writes.
      while (loadWrites < 200) {
        await loadProgress(2);
        await cli('key create', { workspace: 'cli-writes' }).catch((err: Error) => failures.push(`key create: ${err.message}`));
        const created = await cli('webhook create', { workspace: 'cli-writes', url: 'https://hooks.example.com/cli', json: 'true' }).catch((err: Error) => (failures.push(`webhook create: ${err.message}`), undefined));
        if (created) await cli('webhook delete', {}, [JSON.parse(created[0]).id]).catch((err: Error) => failures.push(`webhook delete: ${err.message}`));
      }
    } finally {
      loading = false;
      await load;
      await database.close();
    }
    expect(failures).toEqual([]);
    expect(loadWrites).toBeGreaterThanOrEqual(200);
  }, 120_000);
});
