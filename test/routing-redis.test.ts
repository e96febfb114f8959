// Cooldowns shared through Redis (storage.cache.driver: redis): a target one gateway cooled is skipped by another
// sharing the cache, without a request of its own reaching the failing upstream.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeUpstream } from './kit/fake-upstream.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/** Channel ids of this run: the shared cooldown keys are named by them, so runs never see each other's. */
const run = randomUUID().slice(0, 8);
let fa: FakeUpstream;
let fb: FakeUpstream;
const gateways: TestGateway[] = [];
let clock = Date.parse('2026-11-28T00:00:00Z');

const channel = (id: string, url: string, model: string) =>
  `id: ${id}\nprotocol: openai-chat\nbaseUrl: ${url}/v1\nmodels:\n  - id: ${model}\n    kind: chat\n    price: { inputPerMillion: 1, outputPerMillion: 2 }\n`;

beforeAll(async () => {
  [fa, fb] = await Promise.all([FakeUpstream.start(), FakeUpstream.start()]);
  const options = () => ({
    channels: { a: channel(`a-${run}`, fa.url, 'alpha'), b: channel(`b-${run}`, fb.url, 'beta') },
    files: { 'routes/shared.yaml': `id: shared\ncooldown: { failures: 1, windowSeconds: 30, seconds: 60 }\ntargets: [{ model: alpha }, { model: beta }]\n` },
    storageConfig: `  cache:\n    driver: redis\n    url: ${redisUrl}\n`,
    overrides: { now: () => clock },
  });
  gateways.push(...(await Promise.all([startGateway(options()), startGateway(options())])));
  // Two gateways start here: on a busy machine that takes longer than one.
}, 120_000);
afterAll(async () => {
  for (const gw of gateways) await gw.close();
  await Promise.all([fa, fb].map((f) => f?.close()));
});

const chat = (gw: TestGateway) =>
  gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'shared', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] } });

describe('cooldowns through Redis', () => {
  it('a target one gateway cooled is skipped by the other, and served again by both after the cooldown', async () => {
    const [first, second] = gateways;
    fa.next({ kind: 'status', status: 503 });
    expect((await chat(first)).headers['x-gateway-target']).toBe(`b-${run}/beta`);
    expect(fa.requests).toHaveLength(1);
    expect((await chat(second)).headers['x-gateway-target']).toBe(`b-${run}/beta`);
    expect(fa.requests).toHaveLength(1);
    clock += 61_000;
    expect((await chat(second)).headers['x-gateway-target']).toBe(`a-${run}/alpha`);
    expect((await chat(first)).headers['x-gateway-target']).toBe(`a-${run}/alpha`);
  });
});
