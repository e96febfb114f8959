// Two gateway processes on one PostgreSQL, one Redis and one s3rver: caps exact across both, files and keys shared, sweeps not doubled.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { compiled } from './kit/compiled.js';
import { chatChannel, repoRoot, testModels } from './kit/gateway.js';
import { startS3Server, type S3Server } from './kit/s3-server.js';
import { png } from './kit/media-samples.js';
import { multipart } from './kit/files.js';
import { loadConfig } from '../src/compile/load-config.js';
import { createServices, type Services } from '../src/services.js';
import { createWorkspace, type Workspace } from '../src/store/workspaces.js';
import { issueApiKey } from '../src/auth/keys.js';
import { storeFile } from '../src/files/store-file.js';

const EXPIRED_FILES = 6;

interface Replica {
  child: ChildProcess;
  url: string;
  logs: Record<string, unknown>[];
}

let fake: FakeUpstream;
let s3: S3Server;
let dir: string;
let schema: string;
let admin: Services;
let workspace: Workspace;
let replicas: Replica[];
let expiredIds: string[];

/** Starts `npm start`'s entry point on the shared config and resolves once it listens. */
function startReplica(): Promise<Replica> {
  const child = spawn(process.execPath, [compiled('main')], { cwd: repoRoot, env: { ...process.env, GATEWAY_CONFIG: join(dir, 'config.yaml'), PORT: '0', HOST: '127.0.0.1' } });
  const logs: Record<string, unknown>[] = [];
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (data: Buffer) => {
      buffer += data.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) {
        try {
          logs.push(JSON.parse(line) as Record<string, unknown>);
        } catch {
          logs.push({ msg: line });
        }
        const listening = /listening at (http:\/\/127\.0\.0\.1:\d+)/i.exec(line);
        if (listening) resolve({ child, url: listening[1], logs });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`replica exited with ${code}: ${logs.map((l) => l.msg).join('\n')}`)));
  });
}

beforeAll(async () => {
  fake = await FakeUpstream.start();
  s3 = await startS3Server();
  dir = mkdtempSync(join(tmpdir(), 'gateway-fleet-'));
  schema = `fleet_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  mkdirSync(join(dir, 'channels'));
  cpSync(join(repoRoot, 'channels', 'protocols'), join(dir, 'channels', 'protocols'), { recursive: true });
  writeFileSync(join(dir, 'channels', 'fake.yaml'), chatChannel('fake', `${fake.url}/v1`, { models: testModels.flatChat }));
  writeFileSync(
    join(dir, 'config.yaml'),
    `server:\n  logLevel: info\n  workers: 1\nstorage:\n  dataDir: ./data\n  database:\n    driver: postgres\n    schema: ${schema}\n${s3.blobsConfig}  cache:\n    driver: redis\n    url: ${process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'}\nchannels:\n  dir: ./channels`,
  );
  // The operator's side: the same database, to seed a workspace, keys and files that have already expired.
  admin = await createServices(await loadConfig(join(dir, 'config.yaml')));
  workspace = await createWorkspace(admin.db, 'fleet');
  expiredIds = [];
  for (let i = 0; i < EXPIRED_FILES; i++) {
    const row = await storeFile(admin, { workspaceId: workspace.id, stream: png(), filename: `old-${i}.png`, purpose: 'vision', source: 'upload' });
    expiredIds.push(row.id);
  }
  await admin.db.updateTable('files').set({ expires_at: Math.floor(Date.now() / 1000) - 60 }).where('id', 'in', expiredIds).execute();
  // Both replicas sweep at start: the lease lets one of them do it.
  replicas = await Promise.all([startReplica(), startReplica()]);
}, 120_000);

afterAll(async () => {
  for (const replica of replicas ?? []) replica.child.kill('SIGTERM');
  await Promise.all((replicas ?? []).map((r) => new Promise((resolve) => (r.child.exitCode !== null ? resolve(null) : r.child.once('exit', resolve)))));
  await admin?.db.schema.dropSchema(schema).ifExists().cascade().execute();
  await admin?.close();
  await s3?.close();
  await fake?.close();
  rmSync(dir, { recursive: true, force: true });
});

const chat = (replica: Replica, key: string) =>
  fetch(`${replica.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ model: 'flat-chat', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }) });

describe('a fleet of two replicas', () => {
  it('sweeps each expired file once, on one replica', async () => {
    const sweptCount = () => replicas.flatMap((r) => r.logs.filter((l) => l.msg === 'file sweep').map((l) => Number(l.expired))).reduce((a, b) => a + b, 0);
    await vi.waitFor(() => expect(sweptCount()).toBeGreaterThanOrEqual(EXPIRED_FILES), { timeout: 30_000, interval: 100 });
    expect(sweptCount()).toBe(EXPIRED_FILES);
    expect(await admin.db.selectFrom('files').select('id').where('id', 'in', expiredIds).execute()).toEqual([]);
  });

  it('admits exactly the requests a cap covers out of 200 concurrent ones spread over both', async () => {
    // One cent per request: a 0.60 cap covers exactly 60.
    const key = await issueApiKey(admin.db, workspace, { spendCapMicros: 600_000 });
    const statuses = await Promise.all(Array.from({ length: 200 }, (_, i) => chat(replicas[i % 2], key.key).then(async (r) => (await r.arrayBuffer(), r.status))));
    expect(statuses.filter((s) => s === 200)).toHaveLength(60);
    expect(statuses.filter((s) => s === 402)).toHaveLength(140);
    expect(await admin.spend.balance('key', key.id, Date.now())).toEqual({ spentMicros: 600_000, reservedMicros: 0 });
  });

  it('serves a file uploaded through one replica from the other', async () => {
    const key = await issueApiKey(admin.db, workspace);
    const form = multipart([{ name: 'purpose', value: 'vision' }, { name: 'file', value: png(), filename: 'shared.png', contentType: 'image/png' }]);
    const uploaded = await fetch(`${replicas[0].url}/v1/files`, { method: 'POST', headers: { authorization: `Bearer ${key.key}`, ...form.headers }, body: new Uint8Array(form.payload) });
    expect(uploaded.status).toBe(200);
    const file = (await uploaded.json()) as { id: string; url: string };
    const other = await fetch(`${replicas[1].url}/api/v1/files/${file.id}/content`, { headers: { authorization: `Bearer ${key.key}` } });
    expect(other.status).toBe(200);
    expect(Buffer.from(await other.arrayBuffer())).toEqual(png());
    // The signed link of one replica opens on the other: they share the signing secret kept in the database.
    const token = new URL(file.url).searchParams.get('token')!;
    expect((await fetch(`${replicas[1].url}/api/v1/files/${file.id}/content?token=${token}`)).status).toBe(200);
  });

  it('refuses a key on the other replica on its next request after it is revoked', async () => {
    const key = await issueApiKey(admin.db, workspace);
    expect((await chat(replicas[1], key.key)).status).toBe(200);
    await admin.db.updateTable('api_keys').set({ revoked_at: Math.floor(Date.now() / 1000) }).where('id', '=', key.id).execute();
    const res = await chat(replicas[1], key.key);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('revoked_api_key');
  });
});
