// A channel disabled by a missing variable answers 503 saying only that it is not configured; the log and /readyz name
// the variable, in one warning without a stack trace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { captureLogs } from './kit/log-capture.js';

describe('a request for a disabled channel', () => {
  let gw: TestGateway;
  const logs = captureLogs('info');

  beforeAll(async () => {
    gw = await startGateway({ channels: { off: chatChannel('off', 'http://127.0.0.1:9/v1', { credentialEnv: 'OFF_CHANNEL_TEST_KEY' }) }, env: { OFF_CHANNEL_TEST_KEY: '' }, logger: logs.logger });
  });
  afterAll(() => gw.close());

  it('answers 503 channel_unavailable and logs a warning with its code, not an error with a stack', async () => {
    const res = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] } });
    expect(res.statusCode).toBe(503);
    expect(res.json().error).toMatchObject({ code: 'channel_unavailable', message: 'channel "off" is not configured on this gateway' });
    expect(res.body).not.toContain('OFF_CHANNEL_TEST_KEY');
    const line = await logs.next((l) => l.code === 'channel_unavailable');
    expect(line).toMatchObject({ level: 40, status: 503, msg: 'channel "off" is disabled: environment variable OFF_CHANNEL_TEST_KEY is not set' });
    expect(line.err).toBeUndefined();
    expect(logs.lines.filter((l) => l.level >= 50)).toEqual([]);
  });

  it('names the missing variable on /readyz, for the operator', async () => {
    const res = await gw.app.inject({ method: 'GET', url: '/readyz' });
    expect(res.json().channels.off).toMatchObject({ enabled: false, reason: 'channel "off" is disabled: environment variable OFF_CHANNEL_TEST_KEY is not set' });
  });
});
