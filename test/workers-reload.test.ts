// Reload with server.workers: 2: the admin API's reload reaches every worker (not only the one that took the request),
// and its answer says how many swapped the config in; /v1/models follows it in each.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { newAdminToken } from '../src/admin/auth.js';
import { openSqlite } from '../src/store/database.js';
import { issueApiKey } from '../src/auth/keys.js';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { chatChannel, repoRoot, testModels } from './kit/gateway.js';
import { alive, spawnGateway, type GatewayProcess } from './kit/process.js';

const dir = mkdtempSync(join(tmpdir(), 'gateway-workers-reload-'));
const ops = newAdminToken();
let gateway: GatewayProcess | undefined;
let upstream: FakeUpstream | undefined;

const treeOf = (pid: number): number[] => {
  let children: number[] = [];
  try {
    children = execFileSync('pgrep', ['-P', String(pid)]).toString().trim().split('\n').map(Number).filter(Boolean);
  } catch {
    children = [];
  }
  return children.flatMap((child) => [child, ...treeOf(child)]);
};

afterAll(async () => {
  if (gateway) for (const pid of [gateway.child.pid!, ...treeOf(gateway.child.pid!)]) if (alive(pid)) process.kill(pid, 'SIGKILL');
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

const completion = { id: 'chatcmpl-r', object: 'chat.completion', created: 1, model: 'upstream-chat', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } };
const addedModel = testModels.flatChat.replace('id: flat-chat', 'id: added-chat');

describe('POST /admin/v1/reload with server.workers: 2', () => {
  it('swaps the config in every worker: a channel added is served on every fresh connection, listed by /v1/models, and the answer counts two workers', async () => {
    upstream = await FakeUpstream.start();
    upstream.route(async (req, res) => {
      if (!req.path.endsWith('/chat/completions')) return false;
      json(res, 200, completion);
      return true;
    });
    mkdirSync(join(dir, 'channels'));
    writeFileSync(join(dir, 'channels', 'fake.yaml'), chatChannel('fake', `${upstream.url}/v1`, { models: testModels.flatChat }));
    writeFileSync(
      join(dir, 'config.yaml'),
      `server:\n  workers: 2\nstorage:\n  dataDir: ${dir}/data\nchannels:\n  dir: ./channels\n  protocolsDir: ${repoRoot}/channels/protocols\n` +
        `admin:\n  tokens:\n    - id: ops\n      sha256: ${ops.sha256}\n`,
    );
    gateway = spawnGateway(join(repoRoot, 'node_modules', '.bin', 'tsx'), ['src/main.ts'], { cwd: repoRoot, env: { GATEWAY_CONFIG: join(dir, 'config.yaml'), PORT: '0', HOST: '127.0.0.1' } });
    const url = (await gateway.waitFor(/listening at (http:\/\/127\.0\.0\.1:\d+) with 2 workers/, 90_000))[1];
    await vi.waitFor(() => expect(gateway!.lines.filter((l) => l.includes('Server listening at'))).toHaveLength(2), { timeout: 30_000 });

    const database = await openSqlite(join(dir, 'data', 'gateway.db'));
    const workspace = await database.db.selectFrom('workspaces').select(['id', 'name']).where('name', '=', 'default').executeTakeFirstOrThrow();
    const { key } = await issueApiKey(database.db, workspace as never, {});
    await database.close();
    // Each call on its own connection: the cluster hands connections to the workers in turn.
    const fresh = { authorization: `Bearer ${key}`, connection: 'close' };
    const chat = (model: string) =>
      fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { ...fresh, 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }) }).then(async (r) => (await r.arrayBuffer(), r.status));
    const listed = () => fetch(`${url}/v1/models`, { headers: fresh }).then(async (r) => ((await r.json()) as { data: { id: string }[] }).data.map((m) => m.id));

    expect(await listed()).not.toContain('added-chat');
    writeFileSync(join(dir, 'channels', 'added.yaml'), chatChannel('added', `${upstream.url}/v1`, { models: addedModel }));
    const reload = await fetch(`${url}/admin/v1/reload`, { method: 'POST', headers: { authorization: `Bearer ${ops.token}`, connection: 'close' } });
    expect(reload.status).toBe(200);
    expect(await reload.json()).toMatchObject({ reloaded: true, workers: 2, workers_total: 2 });

    const statuses = await Promise.all(Array.from({ length: 8 }, () => chat('added-chat')));
    expect(statuses).toEqual(Array(8).fill(200));
    for (let i = 0; i < 4; i++) expect(await listed()).toContain('added-chat');
    expect(gateway.lines.filter((l) => l.includes('"msg":"reloaded '))).toHaveLength(2);
  }, 180_000);
});
