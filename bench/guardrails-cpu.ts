// npm run bench:guardrails: CPU time per request (µs) of a chat request with a 4 KiB prompt through a route with five
// pattern guardrails on its input (email, phone, payment-card, iban, secret; action flag, so every request is answered
// and every detector scans the whole prompt) against the same request through a route with none, on one compiled
// gateway, in alternation. GUARDRAIL_REQUESTS (default 5000) and GUARDRAIL_ROUNDS (default 3). Each request's prompt
// differs (a fresh id in it), so no check answers from the last text's scan. Also what the gateway itself timed of
// each check (gateway_guardrail_seconds on /metrics) per guarded request, against the plain request's CPU: on a shared
// machine the end-to-end ratio swings by tens of percent, the checks' own time much less.
//
// Two prompts (GUARDRAIL_MARKERS, default both): `letters`, each prompt marked with a counter spelled in letters (prose
// with no candidate any library must confirm), and `digits`, marked with autocannon's id, whose last part is a
// ten-digit counter: a phone-number candidate in every prompt, so one libphonenumber parse per request (10 to 50 µs).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chatBody, cpuMicrosPerRequest, percentile, startBenchGateway, startMock } from './harness.js';

const requests = Number(process.env.GUARDRAIL_REQUESTS ?? 5000);
const rounds = Number(process.env.GUARDRAIL_ROUNDS ?? 3);
const warmup = Number(process.env.GUARDRAIL_WARMUP ?? 1000);

/** About 4 KiB of ordinary prose with numbers in it (nothing any detector confirms). */
const PROMPT = 'Please summarise the quarterly report: revenue rose 12% to 4,200 units across 37 regions, order 88123 shipped on 2026-11-02, and the team meets at 10:30 in room 4B. '.repeat(26).slice(0, 4096);

type Marker = 'letters' | 'digits';
const markers = (process.env.GUARDRAIL_MARKERS ?? 'letters,digits').split(',') as Marker[];

/** `n` spelled in letters (a, b, ..., z, ba, ...): a marker no detector's start matches. */
const lettersOf = (n: number): string => (n < 26 ? '' : lettersOf(Math.floor(n / 26))) + String.fromCharCode(97 + (n % 26));

/** Each request's prompt differs (a fresh marker), so no check answers from the last text's scan. */
function microsPerRequest(url: string, key: string, model: string, pid: number, marker: Marker): Promise<number> {
  const body = (mark: string) => chatBody({ model, messages: [{ role: 'user', content: `Request ${mark}. ${PROMPT}` }] });
  if (marker === 'digits') return cpuMicrosPerRequest(url, key, body('[<id>]'), pid, requests, { warmup, distinct: true });
  const run = lettersOf(Math.floor(Math.random() * 1e9));
  return cpuMicrosPerRequest(url, key, body('x'), pid, requests, { warmup, bodyOf: (n) => body(`${run}q${lettersOf(n)}`) });
}

const dir = mkdtempSync(join(tmpdir(), 'bench-guardrails-'));
const detectors = ['email', 'phone', 'payment-card', 'iban', 'secret'];
mkdirSync(join(dir, 'routes'));
mkdirSync(join(dir, 'guardrails'));
writeFileSync(join(dir, 'routes', 'bench.yaml'), `- id: plain-route\n  targets: [{ model: bench-chat }]\n- id: guarded-route\n  targets: [{ model: bench-chat }]\n  guardrails: [${detectors.join(', ')}]\n`);
writeFileSync(join(dir, 'guardrails', 'bench.yaml'), detectors.map((d) => `- id: ${d}\n  kind: pattern\n  detectors: [${d}]\n  action: flag\n`).join(''));
const mock = await startMock();
const METRICS_TOKEN = 'bench-guardrails-metrics-token';
const gateway = await startBenchGateway(mock.url, { runner: 'compiled', extraConfig: `routes:\n  dir: ${join(dir, 'routes')}\nguardrails:\n  dir: ${join(dir, 'guardrails')}\nmetrics:\n  token: ${METRICS_TOKEN}\n` });

/** Microseconds each check took per guarded request, as the gateway timed them (gateway_guardrail_seconds: sum over count). */
async function checksMicrosPerRequest(): Promise<Map<string, number>> {
  const text = await (await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text();
  const read = (name: string) => new Map([...text.matchAll(new RegExp(`^${name}\\{guardrail="([^"]+)",stage="input"\\} ([0-9.e+-]+)$`, 'gm'))].map((m) => [m[1], Number(m[2])]));
  const [sums, counts] = [read('gateway_guardrail_seconds_sum'), read('gateway_guardrail_seconds_count')];
  return new Map([...sums].map(([id, seconds]) => [id, (seconds * 1e6) / counts.get(id)!]));
}
const figures = new Map(markers.map((m) => [m, { plain: [] as number[], guarded: [] as number[] }]));
try {
  for (let round = 1; round <= rounds; round++) {
    for (const marker of markers) {
      const f = figures.get(marker)!;
      for (const which of round % 2 ? (['plain', 'guarded'] as const) : (['guarded', 'plain'] as const)) {
        f[which].push(await microsPerRequest(gateway.url, gateway.key, `${which}-route`, gateway.pid, marker));
      }
      const [p, g] = [f.plain.at(-1)!, f.guarded.at(-1)!];
      console.log(`round ${round} (${marker}): no guardrails ${p.toFixed(0)} µs CPU/request, five pattern guardrails ${g.toFixed(0)} µs; guarded/plain ${(g / p).toFixed(3)}; load ${loadavg()[0].toFixed(1)}`);
    }
  }
  for (const [marker, f] of figures) {
    const ratios = f.guarded.map((g, i) => g / f.plain[i]);
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    console.log(`${marker}: median guarded/plain ${percentile(ratios, 50).toFixed(3)} (rounds ${Math.min(...ratios).toFixed(3)}-${Math.max(...ratios).toFixed(3)}), all rounds' CPU guarded/plain ${(sum(f.guarded) / sum(f.plain)).toFixed(3)}`);
  }
  const each = await checksMicrosPerRequest();
  const checks = [...each.values()].reduce((a, b) => a + b, 0);
  const plain = percentile([...figures.values()].flatMap((f) => f.plain), 50);
  console.log(`the five checks in process (both prompts): ${checks.toFixed(1)} µs per guarded request (${[...each].map(([id, us]) => `${id} ${us.toFixed(1)}`).join(', ')}), ${((100 * checks) / plain).toFixed(1)} % of the median plain request's ${plain.toFixed(0)} µs CPU`);
} finally {
  await gateway.stop();
  await mock.stop();
  rmSync(dir, { recursive: true, force: true });
}
