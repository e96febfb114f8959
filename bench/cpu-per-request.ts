// npm run bench:cpu: CPU time per request (µs) of the gateway, compiled (dist/, as `npm start` runs it) and under tsx,
// and of the bare fastify+undici relay, for the same non-streaming chat requests (c=32 unless told), measured in alternation.
// CPU time, unlike req/s, barely moves when the machine is busy with something else, so it compares two builds better
// on a shared machine. CPU_REQUESTS (default 20000), CPU_ROUNDS (default 3) and CPU_CONNECTIONS (default 32; 1 shows
// the cost of a request sent alone, which shares no per-turn work with others).
import autocannon from 'autocannon';
import { chatBody, cpuSeconds, percentile, spawnUntil, startBenchGateway, startMock } from './harness.js';

const requests = Number(process.env.CPU_REQUESTS ?? 20_000);
const rounds = Number(process.env.CPU_ROUNDS ?? 3);
const connections = Number(process.env.CPU_CONNECTIONS ?? 32);
async function microsPerRequest(url: string, headers: Record<string, string>, pid: number): Promise<number> {
  const options = { url, method: 'POST' as const, headers: { 'content-type': 'application/json', ...headers }, body: chatBody(), connections };
  await autocannon({ ...options, amount: 3000 }); // warm-up
  const before = cpuSeconds(pid);
  const result = await autocannon({ ...options, amount: requests });
  if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx and ${result.errors} errors`);
  return ((cpuSeconds(pid) - before) * 1e6) / requests;
}

const mock = await startMock();
const compiled = await startBenchGateway(mock.url, { runner: 'compiled' });
const tsx = await startBenchGateway(mock.url, { runner: 'tsx' });
const relay = await spawnUntil('bench/plain-relay.ts', [], { UPSTREAM_URL: mock.url }, /RELAY_URL=(\S+)/);
const figures = { compiled: [] as number[], tsx: [] as number[], relay: [] as number[] };
try {
  for (let round = 1; round <= rounds; round++) {
    // Alternate the order of the two gateways, so neither always follows the other's load.
    for (const gateway of round % 2 ? [compiled, tsx] : [tsx, compiled]) {
      figures[gateway.runner].push(await microsPerRequest(`${gateway.url}/v1/chat/completions`, { authorization: `Bearer ${gateway.key}` }, gateway.pid));
    }
    figures.relay.push(await microsPerRequest(`${relay.match[1]}/v1/chat/completions`, {}, relay.child.pid!));
    const [c, t, r] = [figures.compiled, figures.tsx, figures.relay].map((f) => f[f.length - 1]);
    console.log(`round ${round}: compiled ${c.toFixed(0)} µs CPU/request, tsx ${t.toFixed(0)} µs, bare relay ${r.toFixed(0)} µs; compiled/tsx ${(c / t).toFixed(3)}, relay/compiled ${(r / c).toFixed(2)}`);
  }
  const median = (v: number[]) => percentile(v, 50);
  const ratios = figures.compiled.map((c, i) => c / figures.tsx[i]);
  console.log(
    `median: compiled ${median(figures.compiled).toFixed(0)} µs, tsx ${median(figures.tsx).toFixed(0)} µs, bare relay ${median(figures.relay).toFixed(0)} µs; ` +
      `compiled/tsx ${median(ratios).toFixed(3)} (rounds ${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)})`,
  );
} finally {
  await compiled.stop();
  await tsx.stop();
  await relay.stop();
  await mock.stop();
}
