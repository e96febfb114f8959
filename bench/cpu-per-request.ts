// npm run bench:cpu: CPU time per request (µs) of the gateway process and of the bare fastify+undici relay, for the
// same non-streaming chat requests at c=32. CPU time, unlike req/s, barely moves when the machine is busy with something
// else, so it compares two builds better on a shared machine. CPU_REQUESTS (default 20000) and CPU_ROUNDS (default 2).
import autocannon from 'autocannon';
import { chatBody, cpuSeconds, spawnUntil, startBenchGateway, startMock, workerOf } from './harness.js';

const requests = Number(process.env.CPU_REQUESTS ?? 20_000);
const rounds = Number(process.env.CPU_ROUNDS ?? 2);
async function microsPerRequest(url: string, headers: Record<string, string>, pid: number): Promise<number> {
  const options = { url, method: 'POST' as const, headers: { 'content-type': 'application/json', ...headers }, body: chatBody(), connections: 32 };
  await autocannon({ ...options, amount: 3000 }); // warm-up
  const before = cpuSeconds(pid);
  const result = await autocannon({ ...options, amount: requests });
  if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx and ${result.errors} errors`);
  return ((cpuSeconds(pid) - before) * 1e6) / requests;
}

const mock = await startMock();
const gateway = await startBenchGateway(mock.url);
const relay = await spawnUntil('bench/plain-relay.ts', [], { UPSTREAM_URL: mock.url }, /RELAY_URL=(\S+)/);
try {
  for (let round = 1; round <= rounds; round++) {
    const gatewayMicros = await microsPerRequest(`${gateway.url}/v1/chat/completions`, { authorization: `Bearer ${gateway.key}` }, gateway.workerPid);
    const relayMicros = await microsPerRequest(`${relay.match[1]}/v1/chat/completions`, {}, workerOf(relay.child.pid!));
    console.log(`round ${round}: gateway ${gatewayMicros.toFixed(0)} µs CPU/request, bare relay ${relayMicros.toFixed(0)} µs, relay/gateway ${(relayMicros / gatewayMicros).toFixed(2)}`);
  }
} finally {
  await gateway.stop();
  await relay.stop();
  await mock.stop();
}
