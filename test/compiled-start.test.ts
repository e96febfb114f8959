import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import OpenAI from 'openai';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, repoRoot } from './kit/gateway.js';
import { alive, spawnGateway, type GatewayProcess } from './kit/process.js';

const dir = mkdtempSync(join(tmpdir(), 'gateway-compiled-'));
const started: GatewayProcess[] = [];
let upstream: FakeUpstream | undefined;
afterAll(async () => {
  for (const p of started) p.child.kill('SIGKILL');
  await upstream?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('npm start runs the compiled gateway', () => {
  it('serves from dist/ (catalogue, migrations, protocols, dashboard views and assets), as the process whose pid it writes; SIGHUP reloads it, SIGTERM to npm stops it', async () => {
    upstream = await FakeUpstream.start();
    mkdirSync(join(dir, 'channels'));
    writeFileSync(join(dir, 'channels', 'fake.yaml'), chatChannel('fake', `${upstream.url}/v1`));
    writeFileSync(join(dir, 'config.yaml'), `server:\n  workers: 1\nstorage:\n  dataDir: ${dir}/data\nchannels:\n  dir: ./channels\n  protocolsDir: ${repoRoot}/channels/protocols\n`);
    const gateway = spawnGateway('npm', ['start', '--silent'], { cwd: repoRoot, env: { GATEWAY_CONFIG: join(dir, 'config.yaml'), PORT: '0', HOST: '127.0.0.1' } });
    started.push(gateway);
    // The first start may build dist/ first (prestart, when src/ is newer than the last build).
    const url = (await gateway.waitFor(/listening at (http:\/\/127\.0\.0\.1:\d+)/i, 120_000))[1];
    const key = (await gateway.waitFor(/(sk-gw-[A-Za-z0-9_-]+)/))[1];
    const pid = Number((await gateway.waitFor(/"msg":"pid (\d+) /))[1]);

    // The pid it prints and writes is the node process running dist/main.js, npm's own child: no wrapper in between.
    expect(JSON.parse(readFileSync(join(dir, 'data', 'gateway.pid'), 'utf8')).pid).toBe(pid);
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')).toContain('dist/main.js');
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).not.toContain('tsx');
    expect(readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')[1]).toBe(String(gateway.child.pid));

    const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1` });
    const completion = await client.chat.completions.create({ model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0].message.content).toBe('Hello from the fake upstream.');
    const usage = await fetch(`${url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
    expect(usage.status).toBe(200);
    const login = await fetch(`${url}/dashboard/login`);
    expect(login.status).toBe(200);
    expect(await login.text()).toContain('<form');
    const css = await fetch(`${url}/dashboard/assets/app.css`);
    expect(css.status).toBe(200);

    process.kill(pid, 'SIGHUP');
    await gateway.waitFor(/"msg":"reload of [^"]*: nothing changed \(files and environment as before\)"/);
    expect(alive(pid)).toBe(true);

    gateway.child.kill('SIGTERM');
    await gateway.exited;
    await vi.waitFor(() => expect(alive(pid)).toBe(false), { timeout: 15_000 });
  }, 180_000);
});
