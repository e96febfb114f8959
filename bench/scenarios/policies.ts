// What each policy costs on its own (issue 52: "each policy's own cost measured on its own"): the gateway's CPU per chat
// request at c=32 on one compiled worker, the same model sent directly, through a one-target route with no policy,
// through a 3-target weighted route, through a route with cache: whose requests all miss (each body distinct), and a
// 4 KiB prompt through a route with five pattern guardrails beside the same prompt on the plain route. Rounds alternate
// the order, so the machine's drift weighs on all; the figures are medians of the rounds.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatBody, cpuMicrosPerRequest, percentile, round, startBenchGateway, startMock } from '../harness.js';

export const name = 'policies: CPU per request of each, on its own';

const requests = Number(process.env.BENCH_POLICY_REQUESTS ?? 5000);
const rounds = Number(process.env.BENCH_POLICY_ROUNDS ?? 3);
const detectors = ['email', 'phone', 'payment-card', 'iban', 'secret'];
/** About 4 KiB of ordinary prose with numbers in it (nothing any detector confirms). */
const PROMPT = 'Please summarise the quarterly report: revenue rose 12% to 4,200 units across 37 regions, order 88123 shipped on 2026-11-02, and the team meets at 10:30 in room 4B. '.repeat(26).slice(0, 4096);

const model = (id: string) => `  - id: ${id}\n    upstream: bench-upstream\n    kind: chat\n    price: { inputPerMillion: 1.0, outputPerMillion: 2.0 }\n`;

/** Each measured case: its model name, its body, and whether each request must differ (the cache's misses). */
const cases = {
  direct: { model: 'bench-chat', body: chatBody(), distinct: false },
  plain: { model: 'plain-route', body: chatBody({ model: 'plain-route' }), distinct: false },
  weighted: { model: 'weighted-route', body: chatBody({ model: 'weighted-route' }), distinct: false },
  'cache miss': { model: 'cached-route', body: chatBody({ model: 'cached-route', temperature: 0, messages: [{ role: 'user', content: 'Question [<id>]' }] }), distinct: true },
  'plain, 4 KiB': { model: 'plain-route', body: chatBody({ model: 'plain-route', messages: [{ role: 'user', content: PROMPT }] }), distinct: false },
  'five guardrails, 4 KiB': { model: 'guarded-route', body: chatBody({ model: 'guarded-route', messages: [{ role: 'user', content: PROMPT }] }), distinct: false },
};
type Case = keyof typeof cases;

function writeConfig(dir: string): string {
  mkdirSync(join(dir, 'routes'));
  mkdirSync(join(dir, 'guardrails'));
  writeFileSync(
    join(dir, 'routes', 'bench.yaml'),
    [
      '- id: plain-route\n  targets: [{ model: bench-chat }]\n',
      '- id: weighted-route\n  strategy: weighted\n  targets:\n    - { model: bench-chat, weight: 60 }\n    - { model: bench-chat-b, weight: 30 }\n    - { model: bench-chat-c, weight: 10 }\n',
      '- id: cached-route\n  cache: { ttlSeconds: 3600 }\n  targets: [{ model: bench-chat }]\n',
      `- id: guarded-route\n  targets: [{ model: bench-chat }]\n  guardrails: [${detectors.join(', ')}]\n`,
    ].join(''),
  );
  writeFileSync(join(dir, 'guardrails', 'bench.yaml'), detectors.map((d) => `- id: ${d}\n  kind: pattern\n  detectors: [${d}]\n  action: flag\n`).join(''));
  return `routes:\n  dir: ${join(dir, 'routes')}\nguardrails:\n  dir: ${join(dir, 'guardrails')}\n`;
}

export async function run(): Promise<Record<string, number | string>> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-policies-'));
  const mock = await startMock();
  const gateway = await startBenchGateway(mock.url, { extraChannels: model('bench-chat-b') + model('bench-chat-c'), extraConfig: writeConfig(dir) });
  const micros = Object.fromEntries(Object.keys(cases).map((k) => [k, [] as number[]])) as Record<Case, number[]>;
  try {
    const order = Object.keys(cases) as Case[];
    // Every path compiled and warm before any is measured (the first case of a cold process would pay for all).
    for (const which of order) await cpuMicrosPerRequest(gateway.url, gateway.key, cases[which].body, gateway.pid, 2000, { warmup: 0, distinct: cases[which].distinct });
    for (let r = 0; r < rounds; r++) {
      for (const which of r % 2 ? [...order].reverse() : order) {
        const c = cases[which];
        micros[which].push(await cpuMicrosPerRequest(gateway.url, gateway.key, c.body, gateway.pid, requests, { warmup: 1000, distinct: c.distinct }));
      }
    }
  } finally {
    await gateway.stop();
    await mock.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const median = (which: Case) => percentile(micros[which], 50);
  /** The median over rounds of one case's CPU against another's measured in the same round. */
  const ratio = (a: Case, b: Case) => round(percentile(micros[a].map((v, i) => v / micros[b][i]), 50));
  const figures: Record<string, number | string> = {};
  for (const which of Object.keys(cases) as Case[]) figures[`CPU us per request: ${which}`] = round(median(which), 0);
  return {
    ...figures,
    'one-target route / the model sent directly': ratio('plain', 'direct'),
    '3-target weighted route / the model sent directly (target <= 1.03)': ratio('weighted', 'direct'),
    'cache on, every request a miss / the same route without cache': ratio('cache miss', 'plain'),
    'five pattern guardrails / none, 4 KiB prompt (target <= 1.05)': ratio('five guardrails, 4 KiB', 'plain, 4 KiB'),
  };
}
