// npm run bench:routing: CPU time per request (µs) of a 3-target weighted route against the same model sent directly,
// on one compiled gateway, in alternation (CPU time barely moves when the machine is busy with something else).
// ROUTING_REQUESTS (default 10000) and ROUTING_ROUNDS (default 3).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatBody, cpuMicrosPerRequest, percentile, startBenchGateway, startMock } from './harness.js';

const requests = Number(process.env.ROUTING_REQUESTS ?? 10_000);
const rounds = Number(process.env.ROUTING_ROUNDS ?? 3);

const microsPerRequest = (url: string, key: string, model: string, pid: number) => cpuMicrosPerRequest(url, key, chatBody({ model }), pid, requests);

const routes = mkdtempSync(join(tmpdir(), 'bench-routes-'));
writeFileSync(join(routes, 'bench.yaml'), `id: bench-route\nstrategy: weighted\ntargets:\n  - { model: bench-chat, weight: 60 }\n  - { model: bench-chat-b, weight: 30 }\n  - { model: bench-chat-c, weight: 10 }\n`);
const model = (id: string) => `  - id: ${id}\n    upstream: bench-upstream\n    kind: chat\n    price: { inputPerMillion: 1.0, outputPerMillion: 2.0 }\n`;
const mock = await startMock();
const gateway = await startBenchGateway(mock.url, { runner: 'compiled', extraChannels: model('bench-chat-b') + model('bench-chat-c'), extraConfig: `routes:\n  dir: ${routes}\n` });
const figures = { direct: [] as number[], routed: [] as number[] };
try {
  for (let round = 1; round <= rounds; round++) {
    for (const which of round % 2 ? (['direct', 'routed'] as const) : (['routed', 'direct'] as const)) {
      figures[which].push(await microsPerRequest(gateway.url, gateway.key, which === 'direct' ? 'bench-chat' : 'bench-route', gateway.pid));
    }
    const [d, r] = [figures.direct.at(-1)!, figures.routed.at(-1)!];
    console.log(`round ${round}: direct ${d.toFixed(0)} µs CPU/request, 3-target weighted route ${r.toFixed(0)} µs; routed/direct ${(r / d).toFixed(3)}`);
  }
  const ratios = figures.routed.map((r, i) => r / figures.direct[i]);
  console.log(`median routed/direct ${percentile(ratios, 50).toFixed(3)} (rounds ${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)})`);
} finally {
  await gateway.stop();
  await mock.stop();
  rmSync(routes, { recursive: true, force: true });
}
