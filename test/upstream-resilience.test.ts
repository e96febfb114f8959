// Retries within a budget and a circuit breaker per channel: a failing channel is retried a little, then skipped.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { startGateway, testModels, type TestGateway } from './kit/gateway.js';

let fake: FakeUpstream;
let backup: FakeUpstream;
let gw: TestGateway;

const channel = (id: string, baseUrl: string, extra: string, models = testModels.fakeChat) => `id: ${id}
protocol: openai-chat
baseUrl: ${baseUrl}
${extra}models:
${models}`;

const fallbackModel = () => `  - id: grouped
    upstream: upstream-chat
    kind: chat
    fallback: true
    price: { perRequest: 0.001 }
`;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  backup = await FakeUpstream.start();
  gw = await startGateway({
    channels: {
      retrying: channel('retrying', `${fake.url}/v1`, 'retries: { max: 2, minDelayMs: 1, maxDelayMs: 50, budget: 0.5, burst: 3 }\n', testModels.fakeChat.replace('fake-chat', 'retry-chat')),
      breaking: channel('breaking', `${fake.url}/v1`, 'priority: 0\nbreaker: { failures: 2, coolDownMs: 60000 }\n', fallbackModel()),
      standby: channel('standby', `${backup.url}/v1`, 'priority: 1\n', fallbackModel()),
    },
  });
});
afterAll(async () => {
  await gw.close();
  await fake.close();
  await backup.close();
});
beforeEach(() => {
  fake.reset();
  backup.reset();
});

const chat = (model: string) =>
  gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}` }, payload: { model, max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] } });

describe('retries', () => {
  it('sends a call again after a 503 and answers from the retry', async () => {
    fake.next({ kind: 'status', status: 503 });
    const res = await chat('retry-chat');
    expect(res.statusCode).toBe(200);
    expect(fake.requests).toHaveLength(2);
    expect(await gw.services.metrics.registry.getSingleMetricAsString('gateway_upstream_retries_total')).toContain('channel="retrying"} 1');
  });

  it('honours a short retry-after on a 429, and passes a long one on to the client instead of waiting', async () => {
    fake.next({ kind: 'status', status: 429, headers: { 'retry-after': '0.01' } });
    expect((await chat('retry-chat')).statusCode).toBe(200);
    fake.reset();
    fake.next({ kind: 'status', status: 429, headers: { 'retry-after': '30' } });
    const res = await chat('retry-chat');
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('30');
    expect(fake.requests).toHaveLength(1);
  });

  it('does not retry a client error', async () => {
    fake.next({ kind: 'status', status: 400, body: { error: { message: 'bad' } } });
    expect((await chat('retry-chat')).statusCode).toBe(400);
    expect(fake.requests).toHaveLength(1);
  });

  it('stops retrying once the budget is spent, answering the upstream failure', async () => {
    // Every call fails: the bucket (3 retries, half a retry per call) runs dry and calls then fail after one attempt.
    for (let i = 0; i < 12; i++) fake.next({ kind: 'status', status: 500 });
    const attempts: number[] = [];
    for (let i = 0; i < 4; i++) {
      const before = fake.requests.length;
      expect((await chat('retry-chat')).statusCode).toBe(502);
      attempts.push(fake.requests.length - before);
    }
    expect(attempts.reduce((a, b) => a + b, 0)).toBeLessThan(4 * 3);
    expect(attempts.at(-1)).toBe(1);
  });
});

describe('the circuit breaker', () => {
  it('opens after consecutive failures, sends the fallback route at once, and shows in /readyz and /metrics', async () => {
    fake.next({ kind: 'status', status: 500 }).next({ kind: 'status', status: 500 });
    // Two failures: each call falls back to the standby channel and succeeds there.
    expect((await chat('grouped')).statusCode).toBe(200);
    expect((await chat('grouped')).statusCode).toBe(200);
    const before = fake.requests.length;
    expect((await chat('grouped')).statusCode).toBe(200);
    // Open: the failing channel is not called at all.
    expect(fake.requests.length).toBe(before);
    expect(backup.requests).toHaveLength(3);
    const ready = (await gw.app.inject({ method: 'GET', url: '/readyz' })).json();
    expect(ready.channels.breaking).toEqual({ enabled: true, circuit: 'open' });
    expect(ready.channels.standby).toEqual({ enabled: true, circuit: 'closed' });
    expect(await gw.services.metrics.registry.getSingleMetricAsString('gateway_channel_circuit_open')).toContain('channel="breaking"} 1');
  });
});

describe('a circuit after its cool-down', () => {
  it('lets one probe through; the probe failing opens it again, succeeding closes it', async () => {
    const { CircuitBreaker } = await import('../src/engine/resilience.js');
    let now = 0;
    const breaker = new CircuitBreaker(2, 1000, () => now);
    breaker.failure();
    breaker.failure();
    expect(breaker.state).toBe('open');
    expect(breaker.admit()).toBe(false);
    now = 1000;
    expect(breaker.admit()).toBe(true);
    expect(breaker.state).toBe('half-open');
    expect(breaker.admit()).toBe(false);
    breaker.failure();
    expect(breaker.state).toBe('open');
    now = 2000;
    expect(breaker.admit()).toBe(true);
    breaker.abandon();
    expect(breaker.admit()).toBe(true);
    breaker.success();
    expect(breaker.state).toBe('closed');
    expect(breaker.admit()).toBe(true);
  });
});
