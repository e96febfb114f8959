// First sign-in: the one-time owner link the first start prints, and `npm run admin -- user create|set-password`.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DashboardClient } from './kit/dashboard.js';
import { compiled } from './kit/compiled.js';
import { repoRoot } from './kit/paths.js';

let dir: string;
let child: ChildProcess;
let lines: string[];
let url: string;

function admin(args: string[], stdin?: string): Promise<{ stdout: string }> {
  const pending = promisify(execFile)(process.execPath, [compiled('cli/admin'), ...args, '--config', join(dir, 'config.yaml')], { cwd: repoRoot });
  pending.child.stdin!.end(stdin ?? '');
  return pending;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gateway-dashboard-setup-'));
  writeFileSync(join(dir, 'config.yaml'), `server:\n  port: 1\n  workers: 1\nstorage:\n  dataDir: ${dir}/data\nchannels:\n  dir: ${repoRoot}/channels\n`);
  child = spawn(process.execPath, [compiled('main')], { cwd: repoRoot, env: { ...process.env, GATEWAY_CONFIG: join(dir, 'config.yaml'), PORT: '0', HOST: '127.0.0.1' } });
  lines = [];
  // The owner's link is printed after the server listens.
  await new Promise<void>((resolve, reject) => {
    let buffer = '';
    const onData = (data: Buffer) => {
      buffer += data.toString();
      const parts = buffer.split('\n');
      buffer = parts.pop()!;
      lines.push(...parts);
      if (parts.some((l) => l.includes('/dashboard/setup?token='))) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`gateway exited with ${code}:\n${lines.join('\n')}`)));
  });
  url = /listening at (http:\/\/127\.0\.0\.1:\d+)/i.exec(lines.join('\n'))![1];
}, 60_000);
afterAll(async () => {
  child?.kill('SIGTERM');
  if (child && child.exitCode === null) await new Promise((r) => child.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
});

const ownerLink = () => new URL(/(http:\/\/\S+\/dashboard\/setup\?token=[A-Za-z0-9_-]+)/.exec(lines.join('\n'))![1]);

describe('the first start', () => {
  it('prints a one-time owner link beside the first key', () => {
    const keyLine = lines.findIndex((l) => /sk-gw-/.test(l));
    const linkLine = lines.findIndex((l) => l.includes('/dashboard/setup?token='));
    expect(keyLine).toBeGreaterThanOrEqual(0);
    expect(linkLine).toBeGreaterThan(keyLine);
    expect(lines.slice(keyLine, linkLine).join('\n')).toContain("owner's dashboard password");
  });

  it('refuses a short password or a mistyped repeat, keeping the link usable', async () => {
    const link = ownerLink();
    const client = new DashboardClient(url);
    expect((await client.get(`${link.pathname}${link.search}`)).status).toBe(200);
    const token = link.searchParams.get('token')!;
    const short = await client.post('/dashboard/setup', { token, email: 'boss@example.com', password: 'short', confirm: 'short' });
    expect(short.status).toBe(400);
    expect(short.html).toContain('at least 12 characters');
    const differ = await client.post('/dashboard/setup', { token, email: 'boss@example.com', password: 'a long enough password', confirm: 'a long enough passwort' });
    expect(differ.status).toBe(400);
    expect((await client.get(`${link.pathname}${link.search}`)).status).toBe(200);
  });

  it('signs the owner up through the link, once', async () => {
    const link = ownerLink();
    const client = new DashboardClient(url);
    const page = await client.get(`${link.pathname}${link.search}`);
    expect(page.html).toContain('Create the owner account');
    const done = await client.post('/dashboard/setup', { token: link.searchParams.get('token')!, email: 'boss@example.com', password: 'a long enough password', confirm: 'a long enough password' });
    expect(done.status).toBe(303);
    const files = await client.get('/dashboard/files');
    expect(files.status).toBe(200);
    expect(files.html).toContain('boss@example.com · owner');
    expect((await client.get('/dashboard/settings/keys')).status).toBe(200);
    expect((await new DashboardClient(url).get(`${link.pathname}${link.search}`)).status).toBe(404);
    expect((await new DashboardClient(url).signIn('boss@example.com', 'a long enough password')).status).toBe(303);
  });
});

describe('npm run admin -- user', () => {
  it('creates a member with a one-time link, and set-password from stdin signs their sessions out', async () => {
    const created = await admin(['user', 'create', '--email', 'Member@Example.com', '--workspace', 'default', '--role', 'member']);
    expect(created.stdout).toContain('created user member@example.com: member of workspace default');
    const link = new URL(/(http:\/\/\S+\/dashboard\/setup\?token=\S+)/.exec(created.stdout)![1]);
    const client = new DashboardClient(url);
    const page = await client.get(`${link.pathname}${link.search}`);
    expect(page.html).toContain('member@example.com');
    await client.post('/dashboard/setup', { token: link.searchParams.get('token')!, password: 'member password one', confirm: 'member password one' });
    const files = await client.get('/dashboard/files');
    expect(files.html).toContain('member@example.com · member');
    expect((await client.get('/dashboard/settings/keys')).status).toBe(403);

    expect((await admin(['user', 'set-password', '--email', 'member@example.com', '--password-stdin'], 'member password two\n')).stdout).toContain('password set');
    expect((await client.get('/dashboard/files')).status).toBe(303);
    expect((await new DashboardClient(url).signIn('member@example.com', 'member password one')).status).toBe(401);
    expect((await new DashboardClient(url).signIn('member@example.com', 'member password two')).status).toBe(303);
  });

  it('ends every other outstanding link when a link is issued or a password is set any way (issue 27 item 7)', { timeout: 60_000 }, async () => {
    const linkOf = (stdout: string) => new URL(/(http:\/\/\S+\/dashboard\/setup\?token=\S+)/.exec(stdout)![1]);
    const open = async (link: URL) => (await new DashboardClient(url).get(`${link.pathname}${link.search}`)).status;
    const first = linkOf((await admin(['user', 'create', '--email', 'links@example.com', '--workspace', 'default', '--role', 'member'])).stdout);
    const second = linkOf((await admin(['user', 'set-password', '--email', 'links@example.com'])).stdout);
    expect(await open(first)).toBe(404);
    expect(await open(second)).toBe(200);
    // Set from stdin: the outstanding link ends.
    await admin(['user', 'set-password', '--email', 'links@example.com', '--password-stdin'], 'links password one\n');
    expect(await open(second)).toBe(404);
    // Set through a link: no other link of theirs stays usable, even one issued before it.
    const third = linkOf((await admin(['user', 'set-password', '--email', 'links@example.com'])).stdout);
    const client = new DashboardClient(url);
    await client.get(`${third.pathname}${third.search}`);
    expect((await client.post('/dashboard/setup', { token: third.searchParams.get('token')!, password: 'links password two', confirm: 'links password two' })).status).toBe(303);
    expect(await open(third)).toBe(404);
  });

  it('refuses an unknown role or workspace', async () => {
    const role = await admin(['user', 'create', '--email', 'x@example.com', '--workspace', 'default', '--role', 'god']).catch((e: { stderr: string }) => e);
    expect((role as { stderr: string }).stderr).toContain('--role must be one of owner, admin, member');
    const workspace = await admin(['user', 'create', '--email', 'x@example.com', '--workspace', 'nope', '--role', 'member']).catch((e: { stderr: string }) => e);
    expect((workspace as { stderr: string }).stderr).toContain('no workspace named "nope"');
  });
});
