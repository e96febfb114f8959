import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import Keyv from 'keyv';
import KeyvRedis from '@keyv/redis';
import { createRateLimiter } from '../src/billing/rate-limit.js';
import { RedisRateStore, rateStoreFor } from '../src/billing/rate-store.js';
import { RateLimitError } from '../src/base/errors.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

// REDIS_URL when CI provides one; otherwise a throwaway redis-server on a loopback port.
let redisUrl = process.env.REDIS_URL ?? '';
let server: ChildProcess | undefined;
const caches: Keyv[] = [];
let gw: TestGateway;

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function startRedis(): Promise<string> {
  const port = await freePort();
  server = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    server!.stdout!.on('data', (data: Buffer) => data.toString().includes('Ready to accept connections') && resolve());
    server!.on('error', reject);
    server!.on('exit', (code) => reject(new Error(`redis-server exited with ${code}`)));
  });
  return `redis://127.0.0.1:${port}`;
}

function redisCache(): Keyv {
  const cache = new Keyv({ store: new KeyvRedis(redisUrl), namespace: 'gateway' });
  caches.push(cache);
  return cache;
}

const limits = { perKey: { requestsPerMinute: 3 }, perWorkspace: { requestsPerMinute: 0 } };

beforeAll(async () => {
  if (!redisUrl) redisUrl = await startRedis();
  gw = await startGateway({ channels: {} });
});
afterAll(async () => {
  await gw?.close();
  for (const cache of caches) await cache.disconnect();
  server?.kill();
});

describe('rate limits on Redis', () => {
  it('uses the Redis client of a Redis cache', () => {
    expect(rateStoreFor(redisCache())).toBeInstanceOf(RedisRateStore);
  });

  it('answers 429 with retry-after through the gateway once a key passes its limit', async () => {
    gw.services.rateLimits = createRateLimiter(limits, rateStoreFor(redisCache()));
    const key = await gw.newKey();
    const get = () => gw.app.inject({ method: 'GET', url: '/v1/models', headers: { authorization: `Bearer ${key}` } });
    for (let i = 0; i < 3; i++) expect((await get()).statusCode).toBe(200);
    const res = await get();
    expect(res.statusCode).toBe(429);
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('shares one limit between replicas, exactly under concurrency', async () => {
    const replicas = [createRateLimiter(limits, rateStoreFor(redisCache())), createRateLimiter(limits, rateStoreFor(redisCache()))];
    const auth = { keyId: `key_shared_${Date.now()}`, workspaceId: 'ws_shared', scopes: [], spendCapMicros: null };
    const outcomes = await Promise.all(
      Array.from({ length: 12 }, (_, i) => replicas[i % 2].admit(auth)!.then(() => 'ok', (err) => (err instanceof RateLimitError ? 'limited' : String(err)))),
    );
    expect(outcomes.filter((o) => o === 'ok')).toHaveLength(3);
    expect(outcomes.filter((o) => o === 'limited')).toHaveLength(9);
  });
});
