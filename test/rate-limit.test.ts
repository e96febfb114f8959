import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, type TestGateway } from './kit/gateway.js';
import { issueApiKey } from '../src/auth/keys.js';

let fake: FakeUpstream;
let gw: TestGateway;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  gw = await startGateway({
    channels: { fake: chatChannel('fake', `${fake.url}/v1`) },
    extraConfig: 'rate-limits:\n  perKey:\n    requestsPerMinute: 3\n  perWorkspace:\n    requestsPerMinute: 5\n',
  });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
});

const models = (key: string) => gw.app.inject({ method: 'GET', url: '/api/v1/models', headers: { authorization: `Bearer ${key}` } });
const statuses = async (key: string, n: number) => {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await models(key)).statusCode);
  return out;
};

describe('rate limits', () => {
  it('answers 429 with retry-after once a key passes its requests per minute', async () => {
    const workspace = await gw.newWorkspace('rl-key');
    const key = await gw.newKey({ workspace });
    expect(await statuses(key, 3)).toEqual([200, 200, 200]);
    const res = await models(key);
    expect(res.statusCode).toBe(429);
    // 3 per minute refill one every 20 s.
    const retryAfter = Number(res.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(20);
    expect(res.json().error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limited' });
    expect(res.json().error.message).toContain('this API key');
  });

  it('limits a workspace across its keys, and a refused request takes nothing from the workspace', async () => {
    const workspace = await gw.newWorkspace('rl-workspace');
    const [a, b, c] = [await gw.newKey({ workspace }), await gw.newKey({ workspace }), await gw.newKey({ workspace })];
    expect(await statuses(a, 4)).toEqual([200, 200, 200, 429]);
    expect(await statuses(b, 2)).toEqual([200, 200]);
    const res = await models(c);
    expect(res.statusCode).toBe(429);
    expect(res.json().error.message).toContain("this key's workspace");
    const other = await gw.newKey({ workspace: await gw.newWorkspace('rl-other') });
    expect((await models(other)).statusCode).toBe(200);
  });

  it('admits exactly the limit out of concurrent requests', async () => {
    const key = await gw.newKey({ workspace: await gw.newWorkspace('rl-burst') });
    const results = await Promise.all(Array.from({ length: 20 }, () => models(key)));
    expect(results.filter((r) => r.statusCode === 200)).toHaveLength(3);
    expect(results.filter((r) => r.statusCode === 429)).toHaveLength(17);
  });

  it('admits exactly the limit when the limiter is hit by concurrent calls with nothing between them', async () => {
    const auth = { keyId: 'key_tight_burst', workspaceId: 'ws_tight_burst', scopes: [], spendCapMicros: null };
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => gw.services.rateLimits.admit(auth)!.then(() => 'ok', () => 'limited')));
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(3);
  });

  it('counts only authenticated requests', async () => {
    const workspace = await gw.newWorkspace('rl-auth');
    const issued = await issueApiKey(gw.services.db, workspace);
    for (let i = 0; i < 5; i++) expect((await models(`${issued.key}x`)).statusCode).toBe(401);
    expect(await statuses(issued.key, 3)).toEqual([200, 200, 200]);
  });

  it('rate limits chat completions in the OpenAI envelope before any upstream call', async () => {
    const key = await gw.newKey({ workspace: await gw.newWorkspace('rl-chat') });
    const chat = () => gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { 'x-api-key': key }, payload: { model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] } });
    for (let i = 0; i < 3; i++) expect((await chat()).statusCode).toBe(200);
    const before = fake.requests.length;
    const res = await chat();
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBeTruthy();
    expect(fake.requests.length).toBe(before);
  });
});
