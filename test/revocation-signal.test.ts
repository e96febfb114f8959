// A key revoked by any process on the SQLite file is refused on the very next request to every gateway process, with no
// wait in between: revoked through the admin API of one cluster worker, through the admin CLI (a process of its own),
// or through a second gateway process on the same file. The caches recheck their counter only once an hour here
// (storage.database.recheckSeconds), so what refuses the key is the change signal alone; the last case shows it: a
// write made around the gateway is not seen until the epoch file is touched.
import { execFile } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAdminToken } from '../src/admin/auth.js';
import { issueApiKey } from '../src/auth/keys.js';
import { openSqlite } from '../src/store/database.js';
import { compiled } from './kit/compiled.js';
import { FakeUpstream, json } from './kit/fake-upstream.js';
import { repoRoot } from './kit/paths.js';
import { killTree, spawnChildGateway, spawnTwoWorkers, type GatewayProcess } from './kit/process.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'gateway-revocation-'));
const databaseFile = join(dir, 'data', 'gateway.db');
const ops = newAdminToken();
let gateway: GatewayProcess;
let replica: { child: ChildProcess; url: string };
let upstream: FakeUpstream;
let url: string;

const completion = { id: 'chatcmpl-r', object: 'chat.completion', created: 1, model: 'upstream-chat', choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } };

beforeAll(async () => {
  upstream = await FakeUpstream.start();
  upstream.route(async (req, res) => {
    if (!req.path.endsWith('/chat/completions')) return false;
    json(res, 200, completion);
    return true;
  });
  const admin = `admin:\n  tokens:\n    - id: ops\n      sha256: ${ops.sha256}\n`;
  ({ gateway, url } = await spawnTwoWorkers(dir, `${upstream.url}/v1`, admin, '  database:\n    recheckSeconds: 3600\n'));
  // The second replica: a gateway process of its own (no cluster) on the same config, so the same file.
  replica = await spawnChildGateway(join(dir, 'config.yaml'));
}, 120_000);

afterAll(async () => {
  killTree(gateway);
  replica?.child.kill('SIGKILL');
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A new key of the default workspace, issued through a connection of this process. */
async function newKey(): Promise<{ id: string; key: string }> {
  const database = await openSqlite(databaseFile);
  try {
    const workspace = await database.db.selectFrom('workspaces').select(['id', 'name']).where('name', '=', 'default').executeTakeFirstOrThrow();
    const issued = await issueApiKey(database.db, workspace as never, {});
    return { id: issued.id, key: issued.key };
  } finally {
    await database.close();
  }
}

interface Answer {
  status: number;
  code?: string;
  /** The process that answered: a worker's pid from its log line, or 'replica'. */
  by: string;
}

/** One chat call on a connection of its own (the cluster hands each new connection to the next worker). */
async function chat(base: string, key: string): Promise<Answer> {
  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', connection: 'close' },
    body: JSON.stringify({ model: 'flat-chat', messages: [{ role: 'user', content: 'hi' }] }),
  });
  const body = (await res.json()) as { error?: { code?: string } };
  if (base === replica.url) return { status: res.status, code: body.error?.code, by: 'replica' };
  const line = await gateway.waitFor(new RegExp(`"pid":(\\d+).*"reqId":"${res.headers.get('x-request-id')}"`));
  return { status: res.status, code: body.error?.code, by: `worker ${line[1]}` };
}

/** Four calls to the cluster (two per worker), then one to the replica, one after another. */
async function everyProcess(key: string): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let i = 0; i < 4; i++) answers.push(await chat(url, key));
  answers.push(await chat(replica.url, key));
  return answers;
}

/** What `everyProcess` saw, by process: the statuses each answered with. */
function byProcess(answers: Answer[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const a of answers) (out[a.by] ??= []).push(a.code ? `${a.status} ${a.code}` : String(a.status));
  return out;
}

/** Served by both workers and the replica (the key cached in each), then revoked by `revoke`, then refused by all three. */
async function expectRefusedEverywhereAfter(revoke: (issued: { id: string; key: string }) => Promise<void>): Promise<void> {
  const issued = await newKey();
  const { key } = issued;
  const served = byProcess(await everyProcess(key));
  expect(Object.keys(served)).toHaveLength(3);
  expect(Object.values(served).flat().every((s) => s === '200')).toBe(true);
  await revoke(issued);
  const refused = byProcess(await everyProcess(key));
  expect(Object.keys(refused)).toHaveLength(3);
  expect(Object.values(refused).flat().every((s) => s === '401 revoked_api_key'), JSON.stringify(refused)).toBe(true);
}

const adminApi = (base: string, method: string, path: string) =>
  fetch(`${base}/admin/v1${path}`, { method, headers: { authorization: `Bearer ${ops.token}`, connection: 'close' } }).then(async (r) => (await r.arrayBuffer(), r.status));

describe('revocation across processes on one SQLite file (no wait between the write and the next request)', () => {
  it('refuses a key revoked through the admin API of one worker on the next request to either worker and to the second replica', async () => {
    await expectRefusedEverywhereAfter(async ({ id }) => expect(await adminApi(url, 'DELETE', `/keys/${id}`)).toBe(200));
  });

  it('refuses a key revoked through the admin CLI on the next request to every process', async () => {
    await expectRefusedEverywhereAfter(async ({ id }) => {
      const { stdout } = await run(process.execPath, [compiled('cli/admin'), 'key', 'revoke', id, '--config', join(dir, 'config.yaml')], { cwd: repoRoot });
      expect(stdout).toContain(`revoked ${id}`);
    });
  });

  it('refuses a key revoked through the second replica on the next request to both workers of the first', async () => {
    await expectRefusedEverywhereAfter(async ({ id }) => expect(await adminApi(replica.url, 'DELETE', `/keys/${id}`)).toBe(200));
  });

  it('serves a key revoked around the gateway (no signal) until the epoch file is touched, then refuses it everywhere', async () => {
    await expectRefusedEverywhereAfter(async ({ id, key }) => {
      const sqlite = new BetterSqlite3(databaseFile);
      try {
        sqlite.prepare('update api_keys set revoked_at = ? where id = ?').run(Math.floor(Date.now() / 1000), id);
      } finally {
        sqlite.close();
      }
      const stillServed = byProcess(await everyProcess(key));
      expect(Object.values(stillServed).flat().every((s) => s === '200'), JSON.stringify(stillServed)).toBe(true);
      const now = new Date();
      utimesSync(`${databaseFile}.auth-epoch`, now, now);
    });
  });
});
