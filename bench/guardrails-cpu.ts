// npm run bench:guardrails: CPU time per request (µs) of a chat request with a 4 KiB prompt through a route with five
// pattern guardrails on its input (email, phone, payment-card, iban, secret; action flag, so every request is answered
// and every detector scans the whole prompt) against the same request through a route with none, on one compiled
// gateway, in alternation. GUARDRAIL_REQUESTS (default 5000) and GUARDRAIL_ROUNDS (default 3).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatBody, cpuMicrosPerRequest, percentile, startBenchGateway, startMock } from './harness.js';

const requests = Number(process.env.GUARDRAIL_REQUESTS ?? 5000);
const rounds = Number(process.env.GUARDRAIL_ROUNDS ?? 3);

/** About 4 KiB of ordinary prose with numbers in it (nothing any detector confirms). */
const PROMPT = 'Please summarise the quarterly report: revenue rose 12% to 4,200 units across 37 regions, order 88123 shipped on 2026-11-02, and the team meets at 10:30 in room 4B. '.repeat(26).slice(0, 4096);

const microsPerRequest = (url: string, key: string, model: string, pid: number) =>
  cpuMicrosPerRequest(url, key, chatBody({ model, messages: [{ role: 'user', content: PROMPT }] }), pid, requests, { warmup: 1000 });

const dir = mkdtempSync(join(tmpdir(), 'bench-guardrails-'));
const detectors = ['email', 'phone', 'payment-card', 'iban', 'secret'];
mkdirSync(join(dir, 'routes'));
mkdirSync(join(dir, 'guardrails'));
writeFileSync(join(dir, 'routes', 'bench.yaml'), `- id: plain-route\n  targets: [{ model: bench-chat }]\n- id: guarded-route\n  targets: [{ model: bench-chat }]\n  guardrails: [${detectors.join(', ')}]\n`);
writeFileSync(join(dir, 'guardrails', 'bench.yaml'), detectors.map((d) => `- id: ${d}\n  kind: pattern\n  detectors: [${d}]\n  action: flag\n`).join(''));
const mock = await startMock();
const gateway = await startBenchGateway(mock.url, { runner: 'compiled', extraConfig: `routes:\n  dir: ${join(dir, 'routes')}\nguardrails:\n  dir: ${join(dir, 'guardrails')}\n` });
const figures = { plain: [] as number[], guarded: [] as number[] };
try {
  for (let round = 1; round <= rounds; round++) {
    for (const which of round % 2 ? (['plain', 'guarded'] as const) : (['guarded', 'plain'] as const)) {
      figures[which].push(await microsPerRequest(gateway.url, gateway.key, `${which}-route`, gateway.pid));
    }
    const [p, g] = [figures.plain.at(-1)!, figures.guarded.at(-1)!];
    console.log(`round ${round}: no guardrails ${p.toFixed(0)} µs CPU/request, five pattern guardrails ${g.toFixed(0)} µs; guarded/plain ${(g / p).toFixed(3)}`);
  }
  const ratios = figures.guarded.map((g, i) => g / figures.plain[i]);
  console.log(`median guarded/plain ${percentile(ratios, 50).toFixed(3)} (rounds ${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)})`);
} finally {
  await gateway.stop();
  await mock.stop();
  rmSync(dir, { recursive: true, force: true });
}
