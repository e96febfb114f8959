// Hardening items 11 and 12: an unimplemented database driver, impossible dates, client aborts and multipart limits, each said plainly.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/compile/load-config.js';
import { ConfigError } from '../src/base/errors.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { multipart } from './kit/files.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { captureLogs } from './kit/log-capture.js';
import { png } from './kit/media-samples.js';

let fake: FakeUpstream;
let gw: TestGateway;
const logs = captureLogs();

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({ listen: true, logger: logs.logger, channels: { fake: chatChannel('fake', `${fake.url}/v1`) } });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

const auth = () => ({ authorization: `Bearer ${gw.key}` });

describe('usage dates', () => {
  it.each(['2025-02-30', '2025-02-30T00:00:00Z', '2025-13-01', '2025-04-31'])('refuses since=%s, a day that does not exist, with 400', async (since) => {
    const res = await gw.app.inject({ method: 'GET', url: `/v1/usage?since=${since}`, headers: auth() });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'invalid_date', param: 'since' });
  });

  it('accepts a leap day', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/v1/usage?since=2024-02-29', headers: auth() });
    expect(res.statusCode).toBe(200);
    expect(res.json().since).toBe(Date.UTC(2024, 1, 29) / 1000);
  });
});

describe('client aborts', () => {
  it('logs a client that hangs up mid-request as an abort, not as a 500 error', async () => {
    const arrived = new Promise<void>((resolve) => fake.next({ kind: 'handler', fn: () => resolve() }));
    const controller = new AbortController();
    const pending = request(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json', 'x-request-id': 'abort-test-1' },
      body: JSON.stringify({ model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] }),
      signal: controller.signal,
    }).catch(() => undefined);
    await arrived;
    controller.abort();
    await pending;
    const line = await logs.next((l) => l.reqId === 'abort-test-1' && (l.level >= 50 || l.code === 'client_aborted'));
    expect(line.level).toBe(30);
    expect(line.code).toBe('client_aborted');
  });
});

describe('multipart limits', () => {
  it('says which multipart limit was hit', async () => {
    const form = multipart([{ name: 'file', value: png(), filename: 'a.png', contentType: 'image/png' }, ...Array.from({ length: 65 }, () => ({ name: 'purpose', value: 'vision' }))]);
    const res = await gw.app.inject({ method: 'POST', url: '/v1/files', headers: { ...auth(), ...form.headers }, payload: form.payload });
    expect(res.statusCode).toBe(413);
    expect(res.json().error).toMatchObject({ code: 'too_many_fields', message: 'too many form fields: at most 64' });
  });
});

describe('database driver', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'gateway-driver-'));
    mkdirSync(join(dir, 'channels'));
    writeFileSync(join(dir, 'config.yaml'), 'server:\n  logLevel: silent\nstorage:\n  database:\n    driver: postgres\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses driver postgres without a connection URL at load, with its file:line:col', async () => {
    const err = await loadConfig(join(dir, 'config.yaml'), { env: {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems).toEqual([expect.stringMatching(/config\.yaml:5:13 \/storage\/database\/driver database driver "postgres" needs a connection URL: set storage.database.url or DATABASE_URL$/)]);
  });

  it('accepts driver postgres with DATABASE_URL from the environment', async () => {
    const config = await loadConfig(join(dir, 'config.yaml'), { env: { DATABASE_URL: 'postgres://127.0.0.1/gateway' } });
    expect(config.gateway.storage.database.driver).toBe('postgres');
  });
});
