// The input stage of five pattern guardrails (flag) in process: CPU µs per request over a 4 KiB prompt, 2,000 distinct
// parsed bodies a round, six rounds after two warm ones. `npx tsx bench/guardrails-chain.mts [letters|digits] [root]`:
// the marker kind (as bench/guardrails-cpu.ts) and the checkout whose src/ runs (another tree, to compare; default this one).
const root = process.argv[3] ?? new URL('..', import.meta.url).pathname.replace(/\/$/, '');
const { Chain } = await import(`${root}/src/guardrails/chain.ts`);
const { PatternGuardrail } = await import(`${root}/src/guardrails/guardrail.ts`);
const { shippedDetector } = await import(`${root}/src/guardrails/detectors.ts`);
const names = ['email', 'phone', 'payment-card', 'iban', 'secret'];
const chain = new Chain(names.map((d) => new PatternGuardrail(d, 'flag', new Set(['input']), [shippedDetector(d, 'US')])), 256);
const PROMPT = 'Please summarise the quarterly report: revenue rose 12% to 4,200 units across 37 regions, order 88123 shipped on 2026-11-02, and the team meets at 10:30 in room 4B. '.repeat(26).slice(0, 4096);
const marker = process.argv[2] ?? 'letters';
const lettersOf = (n: number): string => (n < 26 ? '' : lettersOf(Math.floor(n / 26))) + String.fromCharCode(97 + (n % 26));
const bodies = (base: number) => Array.from({ length: 2000 }, (_, i) => JSON.stringify({ model: 'guarded-route', messages: [{ role: 'user', content: `Request ${marker === 'digits' ? `VBxvXPA5S8u40Od-oekrvw-${String(base + i).padStart(10, '0')}` : 'q' + lettersOf(base + i)}. ${PROMPT}` }], max_tokens: 16 }));
const sink = (v: unknown) => void v;
let base = 0;
const out: number[] = [];
for (let round = 0; round < 8; round++) {
  const texts = bodies((base += 2000));
  const parsed = texts.map((t) => JSON.parse(t));
  const t0 = process.cpuUsage();
  for (const body of parsed) chain.input(body, 'openai-chat', sink, {} as never);
  const u = process.cpuUsage(t0);
  if (round >= 2) out.push((u.user + u.system) / parsed.length);
}
console.log(root, marker, out.map((x) => x.toFixed(1)).join(' '));
