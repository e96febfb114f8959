import { spawn, type ChildProcess } from 'node:child_process';
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { compiled } from './kit/compiled.js';
import { repoRoot } from './kit/paths.js';

const run = promisify(execFile);
const execFileSyncText = (file: string, args: string[]) => execFileSync(file, args).toString();
const children: ChildProcess[] = [];
const dirs: string[] = [];

afterAll(() => {
  for (const child of children) child.kill('SIGTERM');
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Starts a real gateway process (what `npm start` runs: node dist/main.js) and collects its log lines until `until` matches one. */
function startProcess(env: NodeJS.ProcessEnv, until: RegExp): Promise<{ child: ChildProcess; lines: string[]; match: RegExpExecArray }> {
  const child = spawn(process.execPath, [compiled('main')], { cwd: repoRoot, env: { ...process.env, ...env } });
  children.push(child);
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (data: Buffer) => {
      buffer += data.toString();
      const parts = buffer.split('\n');
      buffer = parts.pop()!;
      for (const line of parts) {
        lines.push(line);
        const match = until.exec(line);
        if (match) resolve({ child, lines, match });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`process exited with ${code}:\n${lines.join('\n')}${buffer}`)));
  });
}

describe('npm start', () => {
  it('serves on PORT/HOST, creating workspace "default" and printing one all-scope key on first start only', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-start-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'config.yaml'), `server:\n  port: 1\n  workers: 1\nstorage:\n  dataDir: ${dir}/data\nchannels:\n  dir: ${repoRoot}/channels\n`);
    const env = { GATEWAY_CONFIG: join(dir, 'config.yaml'), PORT: '0', HOST: '127.0.0.1', OPENAI_API_KEY: '' };
    // The pid line is the last of the start.
    const first = await startProcess(env, /"msg":"pid \d+ /);
    // The key and the owner link come as plain text, before the line that names the disabled channels.
    const banner = first.lines.findIndex((l) => l.startsWith('first start: created workspace "default"'));
    expect(banner).toBeGreaterThanOrEqual(0);
    const keyLine = first.lines.findIndex((l) => /^\s+sk-gw-/.test(l));
    const key = first.lines[keyLine].trim();
    expect(keyLine).toBeGreaterThan(banner);
    const disabledLine = first.lines.findIndex((l) => l.includes('channels disabled (missing variables)'));
    expect(disabledLine).toBeGreaterThan(keyLine);
    expect(first.lines[disabledLine]).toContain('openai (OPENAI_API_KEY)');
    expect(first.lines.filter((l) => l.includes('OPENAI_API_KEY'))).toHaveLength(1);
    const url = /listening at (http:\/\/127\.0\.0\.1:\d+)/i.exec(first.lines.join('\n'))![1];
    const models = await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(models.status).toBe(200);
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    first.child.kill('SIGTERM');
    await new Promise((r) => first.child.once('exit', r));

    const second = await startProcess(env, /listening at/i);
    expect(second.lines.some((l) => l.includes('first start'))).toBe(false);
    second.child.kill('SIGTERM');
  }, 90_000); // several processes, one after another

  it('refuses to start on a broken config, printing the error with its position', async () => {
    const child = spawn(process.execPath, [compiled('main'), '--config', 'test/fixtures/config-errors/unknown-field/config.yaml'], { cwd: repoRoot });
    let out = '';
    child.stderr.on('data', (d) => (out += d));
    const code = await new Promise((r) => child.on('exit', r));
    expect(code).toBe(1);
    expect(out).toContain('channels/extra.yaml:4:1 /retry_count unknown field "retry_count"');
  });
});

describe('npm run admin', () => {
  it('creates a workspace and a scoped key, lists and revokes it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-admin-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'config.yaml'), `server:\n  workers: 1\nstorage:\n  dataDir: ${dir}/data\nchannels:\n  dir: ${repoRoot}/channels\n`);
    const admin = (...args: string[]) => run(process.execPath, [compiled('cli/admin'), ...args, '--config', join(dir, 'config.yaml')], { cwd: repoRoot });
    expect((await admin('workspace', 'create', 'acme')).stdout).toContain('created workspace acme');
    const created = JSON.parse((await admin('key', 'create', '--workspace', 'acme', '--scopes', 'llm.chat,files.write', '--expires-in', '30d', '--spend-cap', '10.00', '--json')).stdout);
    expect(created).toMatchObject({ workspace: 'acme', scopes: ['llm.chat', 'files.write'] });
    expect(created.key).toMatch(/^sk-gw-/);
    expect(created.expires_at).toBeGreaterThan(Date.now() / 1000 + 29 * 86400);
    const listed = JSON.parse((await admin('key', 'list', '--workspace', 'acme', '--json')).stdout);
    expect(listed).toEqual([expect.objectContaining({ id: created.id, revoked: false, spend_cap: 10 })]);
    expect(JSON.stringify(listed)).not.toContain(created.key);
    expect((await admin('key', 'revoke', created.id)).stdout).toContain(`revoked ${created.id}`);
    expect(JSON.parse((await admin('key', 'list', '--workspace', 'acme', '--json')).stdout)[0].revoked).toBe(true);
    const bad = await admin('key', 'create', '--workspace', 'acme', '--scopes', 'everything').catch((e) => e);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('unknown scope(s) everything');
    // A scope only the endpoint catalogue declares: the catalogue is read for it (and only then).
    const embeddings = JSON.parse((await admin('key', 'create', '--workspace', 'acme', '--scopes', 'llm.chat,llm.embeddings', '--json')).stdout);
    expect(embeddings.scopes).toEqual(['llm.chat', 'llm.embeddings']);
  }, 90_000); // several processes, one after another
});

describe('npm run admin -- reload', () => {
  it('refuses a broken config without touching the running gateway, and swaps a good one in', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-reload-'));
    dirs.push(dir);
    cpSync(join(repoRoot, 'channels'), join(dir, 'channels'), { recursive: true });
    writeFileSync(join(dir, 'config.yaml'), `server:\n  workers: 1\nstorage:\n  dataDir: ${dir}/data\nchannels:\n  dir: ${dir}/channels\n`);
    // The variable is the gateway's alone: the reload checks with the gateway's environment, not the CLI's.
    const env = { GATEWAY_CONFIG: join(dir, 'config.yaml'), PORT: '0', HOST: '127.0.0.1', EXTRA_ONLY_IN_GATEWAY: 'sk-extra', OPENAI_API_KEY: '' };
    const server = await startProcess(env, /listening at (http:\/\/127\.0\.0\.1:\d+)/i);
    const admin = () => run(process.execPath, [compiled('cli/admin'), 'reload', '--config', join(dir, 'config.yaml')], { cwd: repoRoot });

    writeFileSync(join(dir, 'channels', 'extra.yaml'), 'id: extra\nprotocol: nope\n');
    const refused = await admin().catch((e) => e);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('extra.yaml');
    expect((await fetch(`${server.match[1]}/healthz`)).status).toBe(200);

    writeFileSync(join(dir, 'channels', 'extra.yaml'), 'id: extra\nprotocol: openai-chat\nbaseUrl: http://127.0.0.1:9/v1\ncredential: { env: EXTRA_ONLY_IN_GATEWAY }\nmodels:\n  - id: extra-chat\n    kind: chat\n    price: { inputPerMillion: 1 }\n');
    const { stdout } = await admin();
    expect(stdout).toContain('channel "extra" added');
    expect(stdout).not.toContain('channel "extra" is disabled');
    expect(stdout).toContain('channel "openai" is disabled: environment variable OPENAI_API_KEY is not set');
    // The start summary counts the shipped models; the reload's counts one more.
    const models = Number(/(\d+) model\(s\)/.exec(server.lines.find((l) => l.includes('model(s)'))!)![1]);
    await vi.waitFor(() => expect(server.lines.some((l) => l.includes('reloaded') && l.includes(`${models + 1} model(s)`))).toBe(true), { timeout: 20_000 });
    server.child.kill('SIGTERM');
  }, 90_000);
});

describe('npm run demo', () => {
  it('stops on SIGTERM to npm, leaving no process of it behind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-demo-'));
    dirs.push(dir);
    const npm = spawn('npm', ['run', '--silent', 'demo'], { cwd: repoRoot, env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DEMO_DATA_DIR: dir } });
    children.push(npm);
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      const onData = (data: Buffer) => {
        output += data.toString();
        const match = /listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
        if (match) resolve(match[1]);
      };
      npm.stdout!.on('data', onData);
      npm.stderr!.on('data', onData);
      npm.once('exit', (code) => reject(new Error(`npm run demo exited with ${code}:\n${output}`)));
    });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const tree = (pid: number): number[] => {
      const children = (() => {
        try {
          return execFileSyncText('pgrep', ['-P', String(pid)]).trim().split('\n').map(Number).filter(Boolean);
        } catch {
          return [];
        }
      })();
      return children.flatMap((child) => [child, ...tree(child)]);
    };
    const processes = tree(npm.pid!);
    expect(processes.length).toBeGreaterThan(0);
    const exited = new Promise((resolve) => npm.once('exit', resolve));
    npm.kill('SIGTERM');
    await exited;
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await vi.waitFor(() => expect(processes.filter(alive)).toEqual([]), { timeout: 15_000 });
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  }, 90_000);
});
