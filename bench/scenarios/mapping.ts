// Micro-benchmark: microseconds to map one messages-to-chat exchange (request, usage, response) with the shipped mappings,
// compiled as served, and with every leaf evaluated by liquidjs's public evalValueSync instead (the interpreter it is checked against).
import { join } from 'node:path';
import { loadConfig } from '../../src/compile/load-config.js';
import type { ProtocolConfig } from '../../src/config/types.js';
import { FixtureRunner } from '../../src/compile/fixtures.js';
import { buildTranslator, type TranslationSpec } from '../../src/engine/translate/declared.js';

export const name = 'mapping';

const ROUNDS = 7;
const PER_ROUND = 5000;

// The bodies of the translation scenario (bench/scenarios/translation.ts) and the fake upstream's answer to them.
const messages = { model: 'fake-chat', max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }] };
const answer = () => ({
  id: 'chatcmpl-fake',
  object: 'chat.completion',
  created: 1,
  model: 'upstream-chat',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the fake upstream.' }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
});

/** Best of several rounds, in microseconds per call: the machine is shared, the minimum is the least disturbed. */
function best(fn: () => void): number {
  for (let i = 0; i < PER_ROUND; i++) fn();
  let min = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const started = performance.now();
    for (let i = 0; i < PER_ROUND; i++) fn();
    min = Math.min(min, ((performance.now() - started) * 1000) / PER_ROUND);
  }
  return min;
}

export async function run(): Promise<Record<string, number | string>> {
  const loadStarted = performance.now();
  const config = await loadConfig(join(import.meta.dirname, '..', '..', 'config.example.yaml'), { env: {} });
  const firstLoadMs = performance.now() - loadStarted;
  const again = performance.now();
  await loadConfig(join(import.meta.dirname, '..', '..', 'config.example.yaml'), { env: {} });
  const loadMs = performance.now() - again;

  const protocol = config.protocols.get('openai-chat') as ProtocolConfig;
  const runner = new FixtureRunner(config, config.protocols);
  const translator = buildTranslator(config, protocol, 'anthropic-messages', protocol.translations!['anthropic-messages'] as unknown as TranslationSpec);
  // One context whose usage reader is renewed per exchange, as the pipeline reads usage once per upstream call.
  let reader = runner.usageReader(protocol, 'chat');
  const ctx = { ...runner.context(protocol), usage: () => reader.counts() };
  const exchange = () => {
    reader = runner.usageReader(protocol, 'chat');
    translator.request(messages, ctx);
    const body = answer();
    reader.fromAnswer(body);
    translator.response(body, ctx);
  };
  const requestOnly = () => translator.request(messages, ctx);

  const compiled = best(exchange);
  const compiledRequest = best(requestOnly);
  config.templates.verification.interpret = true;
  const interpreted = best(exchange);
  config.templates.verification.interpret = false;

  return {
    'config load ms (first, with module compile)': Math.round(firstLoadMs),
    'config load ms (again)': Math.round(loadMs),
    'messages-to-chat request us (compiled)': Number(compiledRequest.toFixed(2)),
    'messages-to-chat request+usage+response us (compiled)': Number(compiled.toFixed(2)),
    'messages-to-chat request+usage+response us (leaves through liquidjs evalValueSync)': Number(interpreted.toFixed(2)),
  };
}

// `tsx bench/scenarios/mapping.ts` runs this scenario alone.
if (import.meta.url === `file://${process.argv[1]}`) console.log(await run());
