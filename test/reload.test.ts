// Hot reload: a checked config swaps in whole; requests in flight (a stream included) finish on the old snapshot; a bad config is refused.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { pausedChatStream } from './kit/streams.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { ConfigError } from '../src/base/errors.js';
import { spawn } from 'node:child_process';
import { dataPathFor } from '../src/config/load.js';
import { commands as reloadCommands } from '../src/cli/admin/reload.js';
import { pidFileContents, PID_FILE, reloadConfig } from '../src/compile/reload.js';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import pino from 'pino';
import { readFileSync } from 'node:fs';
import { newAdminToken } from '../src/admin/auth.js';
import { captureLogs } from './kit/log-capture.js';

let before: FakeUpstream;
let after: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  before = await FakeUpstream.start();
  after = await FakeUpstream.start();
  gw = await startGateway({ channels: { fake: chatChannel('fake', `${before.url}/v1`) } });
});
afterAll(async () => {
  await gw.close();
  await before.close();
  await after.close();
});

const chat = (extra: Record<string, unknown> = {}) =>
  gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'fake-chat', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }], ...extra } });
const writeChannel = (text: string) => writeFileSync(join(gw.dir, 'channels', 'fake.yaml'), text);

describe('hot reload', () => {
  it('lets a stream open on the old upstream finish while new requests go to the new one', async () => {
    // The old upstream starts a stream and holds it until the test lets it finish.
    const { started, finish } = pausedChatStream(before, 'old ', 'upstream');
    const stream = chat({ stream: true });
    await started;

    writeChannel(chatChannel('fake', `${after.url}/v1`));
    await gw.services.reload({ env: process.env });
    expect(gw.services.runtime.draining).toBe(1);

    const fresh = await chat();
    expect(fresh.statusCode).toBe(200);
    expect(after.requests).toHaveLength(1);

    finish();
    const res = await stream;
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('old ');
    expect(res.body).toContain('upstream');
    expect(res.body.trim().endsWith('data: [DONE]')).toBe(true);
    expect(before.requests).toHaveLength(1);
    expect(gw.services.runtime.draining).toBe(0);
  });

  it('refuses a bad config with its errors and keeps serving the running one', async () => {
    writeChannel('id: fake\nprotocol: openai-chat\nbaseUrl: [not, a, url\n');
    const refused = await gw.services.reload({ env: process.env }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).problems[0]).toMatch(/fake\.yaml:\d+:\d+ /);
    expect((await chat()).statusCode).toBe(200);
    expect(after.requests.length).toBeGreaterThan(1);
  });

  it('reports a refused reload in /readyz until a good one (issue 27 item 10)', async () => {
    const log = pino({ level: 'silent' });
    writeChannel('id: fake\nprotocol: openai-chat\nbaseUrl: [not, a, url\n');
    expect(await reloadConfig(gw.services, log)).toBe(false);
    const degraded = await gw.app.inject({ method: 'GET', url: '/readyz' });
    expect(degraded.json()).toMatchObject({ status: 'degraded', reload: { status: 'failed', problems: [expect.stringMatching(/fake\.yaml/)] } });
    expect((await chat()).statusCode).toBe(200);
    writeChannel(chatChannel('fake', `${after.url}/v1`));
    expect(await reloadConfig(gw.services, log)).toBe(true);
    expect((await gw.app.inject({ method: 'GET', url: '/readyz' })).json()).toMatchObject({ status: 'ready', reload: { status: 'ok' } });
  });

  it('admin reload signals nothing when the pid file is stale and names another process (issue 27 item 10)', async () => {
    const pidFile = dataPathFor(gw.services.config)(PID_FILE);
    mkdirSync(dirname(pidFile), { recursive: true });
    const bystander = spawn('sleep', ['30']);
    const exited = new Promise((resolve) => bystander.once('exit', (code, signal) => resolve(signal ?? code)));
    const run = (text: string) => {
      writeFileSync(pidFile, text);
      return reloadCommands[0].run({ db: gw.services.db, config: gw.services.config, values: {}, positionals: [], print: () => undefined }).catch((err: Error) => err);
    };
    try {
      // A pid file of an older gateway (a bare number), and one whose start time is not the bystander's.
      for (const text of [String(bystander.pid), pidFileContents(bystander.pid!).replace(/"started":"\d+"/, '"started":"1"')]) {
        const refused = await run(text);
        expect(refused).toBeInstanceOf(Error);
        expect((refused as Error).message).toContain('no running gateway found');
      }
      expect(await Promise.race([exited, new Promise((r) => setTimeout(r, 300, 'alive'))])).toBe('alive');
      // The file the gateway writes names this process, and checks out: it is signalled, reloads as a gateway does on
      // SIGHUP, and the CLI prints the outcome that reload wrote.
      const messages: string[] = [];
      process.once('SIGHUP', () => {
        messages.push('hup');
        void reloadConfig(gw.services, pino({ level: 'silent' }));
      });
      writeFileSync(pidFile, pidFileContents());
      await reloadCommands[0].run({ db: gw.services.db, config: gw.services.config, values: {}, positionals: [], print: (line) => messages.push(line) });
      expect(messages[0]).toBe('hup');
      expect(messages).toContain(`gateway pid ${process.pid} reloaded: nothing changed (files and environment as before)`);
    } finally {
      bystander.kill();
    }
  });
});

describe('what a reload changes at once', () => {
  const listed = async () => (await gw.app.inject({ method: 'GET', url: '/v1/models', headers: { authorization: `Bearer ${gw.key}` } })).json().data.map((m: { id: string }) => m.id);

  it('lists a model a reload added in GET /v1/models, and drops one it removed', async () => {
    writeChannel(chatChannel('fake', `${after.url}/v1`));
    await gw.services.reload({ env: process.env });
    expect(await listed()).toEqual(['fake-chat']);
    writeChannel(chatChannel('fake', `${after.url}/v1`, { models: '  - id: renamed-chat\n    upstream: upstream-chat\n    kind: chat\n    price: { perRequest: 0.01 }\n' }));
    await gw.services.reload({ env: process.env });
    expect(await listed()).toEqual(['renamed-chat']);
    writeChannel(chatChannel('fake', `${after.url}/v1`));
    await gw.services.reload({ env: process.env });
  });

  it('lets a new admin token in at once without warning of a restart, and names a changed port as waiting for one', async () => {
    const file = join(gw.dir, 'config.yaml');
    const original = readFileSync(file, 'utf8');
    const ops = newAdminToken();
    const logs = captureLogs('info');
    const log = pino({ level: 'info' }, logs.logger.stream as never);
    const workspaces = () => gw.app.inject({ method: 'GET', url: '/admin/v1/workspaces', headers: { authorization: `Bearer ${ops.token}` } });
    try {
      expect((await workspaces()).statusCode).toBe(401);
      writeFileSync(file, `${original}admin:\n  tokens:\n    - id: ops\n      sha256: ${ops.sha256}\n`);
      expect(await reloadConfig(gw.services, log)).toBe(true);
      expect((await workspaces()).statusCode).toBe(200);
      expect(logs.lines.filter((l) => l.level >= 40).map((l) => l.msg)).toEqual([]);

      writeFileSync(file, original.replace('server:\n', 'server:\n  port: 4111\n'));
      expect(await reloadConfig(gw.services, log)).toBe(true);
      const warned = logs.lines.filter((l) => l.level >= 40);
      expect(warned.map((l) => l.msg)).toEqual([expect.stringMatching(/^config settings server\.port changed; they apply at the next restart/)]);
      expect(warned[0].settings).toEqual(['server.port']);
    } finally {
      writeFileSync(file, original);
      await gw.services.reload({ env: process.env });
    }
  });
});
