// Chat pass-through: gateway vs bare fastify+undici relay req/s at c=32 (one worker, and server.workers at the number
// of cores), added p50 latency at concurrency 1, added time to first SSE token.
import { availableParallelism } from 'node:os';
import { chatBody, percentile, round, sequentialTimes, spawnUntil, startBenchGateway, startMock, throughput } from '../harness.js';

export const name = 'chat pass-through';

export async function run(): Promise<Record<string, number | string>> {
  const mock = await startMock();
  const gateway = await startBenchGateway(mock.url);
  const cores = availableParallelism();
  const all = await startBenchGateway(mock.url, { workers: cores });
  const plain = await spawnUntil('bench/plain-relay.ts', [], { UPSTREAM_URL: mock.url }, /RELAY_URL=(\S+)/);
  const auth = { authorization: `Bearer ${gateway.key}` };
  const direct = `${mock.url}/v1/chat/completions`;
  const relayed = `${gateway.url}/v1/chat/completions`;
  try {
    // Warm both paths (JIT, pools) before measuring.
    await throughput(relayed, auth, chatBody(), 20, 2);
    const allRelayed = `${all.url}/v1/chat/completions`;
    const allAuth = { authorization: `Bearer ${all.key}` };
    await throughput(allRelayed, allAuth, chatBody(), 20, 2);
    await throughput(direct, {}, chatBody(), 20, 1);
    const directRps = await throughput(direct, {}, chatBody(), 32);
    await throughput(`${plain.match[1]}/v1/chat/completions`, {}, chatBody(), 20, 1);
    // Alternate gateway and bare relay, twice each, so a passing disturbance of the machine weighs on both.
    const gatewayRuns: number[] = [];
    const plainRuns: number[] = [];
    const allRuns: number[] = [];
    for (let i = 0; i < 2; i++) {
      gatewayRuns.push(await throughput(relayed, auth, chatBody(), 32));
      plainRuns.push(await throughput(`${plain.match[1]}/v1/chat/completions`, {}, chatBody(), 32));
      allRuns.push(await throughput(allRelayed, allAuth, chatBody(), 32));
    }
    const gatewayRps = Math.max(...gatewayRuns);
    const plainRps = Math.max(...plainRuns);
    const allRps = Math.max(...allRuns);

    const count = 1500;
    const directTimes = await sequentialTimes(direct, {}, chatBody(), count);
    const gatewayTimes = await sequentialTimes(relayed, auth, chatBody(), count);
    const plainTimes = await sequentialTimes(`${plain.match[1]}/v1/chat/completions`, {}, chatBody(), count);
    const [directLatency, gatewayLatency, plainLatency] = [directTimes, gatewayTimes, plainTimes].map((t) => percentile(t, 50));
    const [directP99, gatewayP99, plainP99] = [directTimes, gatewayTimes, plainTimes].map((t) => percentile(t, 99));

    const streamBody = chatBody({ stream: true });
    // The stream path warmed up first (the load above was JSON only), the gateway's and the bare relay's alike.
    await throughput(relayed, auth, streamBody, 8, 2);
    await throughput(`${plain.match[1]}/v1/chat/completions`, {}, streamBody, 8, 2);
    const directTtft = percentile(await sequentialTimes(direct, {}, streamBody, 800, true), 50);
    const gatewayTtft = percentile(await sequentialTimes(relayed, auth, streamBody, 800, true), 50);
    const plainTtft = percentile(await sequentialTimes(`${plain.match[1]}/v1/chat/completions`, {}, streamBody, 800, true), 50);
    return {
      direct_rps: round(directRps, 0),
      gateway_rps: round(gatewayRps, 0),
      'gateway/direct req/s': round(gatewayRps / directRps),
      'bare fastify+undici relay req/s (same machine)': round(plainRps, 0),
      'bare relay/direct req/s': round(plainRps / directRps),
      'gateway/bare relay req/s, one worker each (target >= 0.8 per core)': round(gatewayRps / plainRps),
      [`gateway req/s with ${cores} workers (server.workers)`]: round(allRps, 0),
      [`gateway ${cores} workers / 1 worker req/s (client and mock share the cores: reported, not targeted)`]: round(allRps / gatewayRps),
      direct_p50_ms: round(directLatency),
      bare_relay_p50_ms: round(plainLatency),
      gateway_p50_ms: round(gatewayLatency),
      'added p50 latency ms at c=1': round(gatewayLatency - directLatency),
      'bare relay added p50 latency ms at c=1': round(plainLatency - directLatency),
      'gateway p50 beyond the bare relay ms (target <= 0.15)': round(gatewayLatency - plainLatency),
      direct_ttft_p50_ms: round(directTtft),
      gateway_ttft_p50_ms: round(gatewayTtft),
      'added time to first SSE token ms (target <= 0.5)': round(gatewayTtft - directTtft),
      'bare relay added time to first SSE token ms': round(plainTtft - directTtft),
      'gateway first token beyond the bare relay ms (target <= 0.2)': round(gatewayTtft - plainTtft),
      'added p99 latency ms at c=1': round(gatewayP99 - directP99),
      'bare relay added p99 latency ms at c=1': round(plainP99 - directP99),
      'gateway p99 beyond the bare relay ms (target <= 1)': round(gatewayP99 - plainP99),
    };
  } finally {
    await gateway.stop();
    await all.stop();
    await plain.stop();
    await mock.stop();
  }
}
