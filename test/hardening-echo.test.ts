// Hardening item 4: a client's own values come back (in answers and log lines) cut to a short prefix. And what the
// operator's log says of an upstream it could not reach.
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, testModels, type TestGateway } from './kit/gateway.js';
import { multipart } from './kit/files.js';
import { captureLogs, type LogCapture } from './kit/log-capture.js';
import { png } from './kit/media-samples.js';

const MiB = 1024 * 1024;
let fake: FakeUpstream;
let gw: TestGateway;
let logs: LogCapture;
let deadPort = 0;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  logs = captureLogs();
  // A port nothing listens on: taken and let go, so the connection is refused.
  const closed = createServer().listen(0, '127.0.0.1');
  await once(closed, 'listening');
  deadPort = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const dead = chatChannel('dead', `http://127.0.0.1:${deadPort}/v1`, { models: '  - id: dead-chat\n    kind: chat\n    price: { inputPerMillion: 1, outputPerMillion: 1 }\n' });
  gw = await startGateway({ logger: logs.logger, channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: testModels.fakeChat + testModels.fakeEval }), dead } });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

const headers = () => ({ authorization: `Bearer ${gw.key}`, 'content-type': 'application/json' });

/** The longest log line written for one request. */
async function longestLogLine(requestId: string): Promise<number> {
  await logs.next((line) => line.reqId === requestId && typeof line.ms === 'number');
  return Math.max(...logs.lines.map((line, i) => (line.reqId === requestId ? logs.sizes[i] : 0)));
}

describe('an unreachable upstream', () => {
  it('is logged with the address it tried and the system error, the client told only that it is unreachable (issue 49)', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: headers(), payload: { model: 'dead-chat', messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.statusCode).toBe(502);
    expect(res.json().error.code).toBe('upstream_unreachable');
    expect(res.body).not.toContain(String(deadPort));
    const line = await logs.next((l) => l.reqId === res.headers['x-request-id'] && l.code === 'upstream_unreachable');
    expect(line).toMatchObject({ errno: 'ECONNREFUSED', address: `127.0.0.1:${deadPort}` });
  });
});

describe('echoed client values are cut to a short prefix', () => {
  it('answers a 5 MiB model id with a short 404 and a short log line', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: headers(), payload: { model: 'm'.repeat(5 * MiB), messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('model_not_found');
    expect(res.body.length).toBeLessThan(1024);
    expect(await longestLogLine(res.headers['x-request-id'] as string)).toBeLessThan(4096);
  });

  it('answers a 1 MiB unknown evaluate field name with a short 400', async () => {
    const body = { model: 'fake-eval', state: 's', questions: { q: { type: 'boolean', instructions: 'ok?' } }, ['f'.repeat(MiB)]: 1 };
    const res = await gw.app.inject({ method: 'POST', url: '/v1/evaluate', headers: headers(), payload: body });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.message).toContain('unknown field');
    expect(res.body.length).toBeLessThan(1024);
  });

  it('answers a 1 MiB unknown question field name with a short 400', async () => {
    const body = { model: 'fake-eval', state: 's', questions: { q: { type: 'boolean', instructions: 'ok?', ['g'.repeat(MiB)]: 'x' } } };
    const res = await gw.app.inject({ method: 'POST', url: '/v1/evaluate', headers: headers(), payload: body });
    expect(res.statusCode).toBe(400);
    expect(res.body.length).toBeLessThan(2048);
  });

  it('answers a 1 MiB question id with a short 400', async () => {
    const body = { model: 'fake-eval', state: 's', questions: { ['q'.repeat(MiB)]: { type: 'nope' } } };
    const res = await gw.app.inject({ method: 'POST', url: '/v1/evaluate', headers: headers(), payload: body });
    expect(res.statusCode).toBe(400);
    expect(res.body.length).toBeLessThan(2048);
  });

  it('answers a 512 KiB upload purpose with a short 400', async () => {
    const form = multipart([
      { name: 'file', value: png(), filename: 'a.png', contentType: 'image/png' },
      { name: 'purpose', value: 'p'.repeat(512 * 1024) },
    ]);
    const res = await gw.app.inject({ method: 'POST', url: '/v1/files', headers: { authorization: `Bearer ${gw.key}`, ...form.headers }, payload: form.payload });
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_purpose');
    expect(res.body.length).toBeLessThan(1024);
  });

  it('answers an unknown 64 KiB multipart field name with a short 400', async () => {
    const form = multipart([{ name: 'x'.repeat(64 * 1024), value: 'v' }]);
    const res = await gw.app.inject({ method: 'POST', url: '/v1/files', headers: { authorization: `Bearer ${gw.key}`, ...form.headers }, payload: form.payload });
    expect(res.statusCode).toBe(400);
    expect(res.body.length).toBeLessThan(1024);
  });
});
