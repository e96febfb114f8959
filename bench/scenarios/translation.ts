// Benchmark: messages-to-chat and Responses-to-chat translation throughput against chat pass-through, and the time to first
// token a translated stream adds.
import autocannon from 'autocannon';
import { FakeUpstream } from '../../test/kit/fake-upstream.js';
import { chatChannel, startGateway, testModels } from '../../test/kit/gateway.js';

export const name = 'translation';

const DURATION_S = 3;
/** Rounds of the three paths in turn (the order rotating), so a passing disturbance of the machine weighs on all three. */
const ROUNDS = 4;
const CONNECTIONS = 32;
const TTFT_SAMPLES = 300;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function requestsPerSecond(url: string, headers: Record<string, string>, body: object): Promise<number> {
  const result = await autocannon({ url, method: 'POST', connections: CONNECTIONS, duration: DURATION_S, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  if (result.non2xx || result.errors) throw new Error(`${url}: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  return result.requests.average;
}

/** Median milliseconds from sending a streaming request to receiving its first text delta. */
async function firstTokenMs(url: string, headers: Record<string, string>, body: object, marker: string): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < TTFT_SAMPLES + 20; i++) {
    const started = performance.now();
    const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let seen = '';
    while (!seen.includes(marker)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`${url}: stream ended before its first token`);
      seen += value;
    }
    if (i >= 20) samples.push(performance.now() - started);
    while (!(await reader.read()).done);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

export async function run(): Promise<Record<string, number | string>> {
  const fake = await FakeUpstream.start();
  // The same fake upstream behind a channel that serves only chat, so Responses requests to it are translated.
  const chatOnly = chatChannel('chatonly', `${fake.url}/v1`, { operations: ['chat'], models: testModels.fakeChat.replace('id: fake-chat', 'id: chatonly-chat') });
  const gw = await startGateway({ channels: { fake: chatChannel('fake', `${fake.url}/v1`), chatonly: chatOnly }, listen: true });
  try {
    const auth = { authorization: `Bearer ${gw.key}` };
    const anthropic = { 'x-api-key': gw.key, 'anthropic-version': '2023-06-01' };
    const chat = { model: 'fake-chat', max_tokens: 64, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] };
    const messages = { model: 'fake-chat', max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: 'hi' }] };
    const responses = { model: 'chatonly-chat', max_output_tokens: 64, instructions: 'Be brief.', input: 'hi' };

    // Warm both paths (JIT, pools, prepared statements) before measuring either.
    await autocannon({ url: `${gw.url}/v1/chat/completions`, method: 'POST', connections: 8, amount: 2000, headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify(chat) });
    await autocannon({ url: `${gw.url}/v1/messages`, method: 'POST', connections: 8, amount: 2000, headers: { 'content-type': 'application/json', ...anthropic }, body: JSON.stringify(messages) });
    await autocannon({ url: `${gw.url}/v1/responses`, method: 'POST', connections: 8, amount: 2000, headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify(responses) });

    const paths = [
      () => requestsPerSecond(`${gw.url}/v1/chat/completions`, auth, chat),
      () => requestsPerSecond(`${gw.url}/v1/messages`, anthropic, messages),
      () => requestsPerSecond(`${gw.url}/v1/responses`, auth, responses),
    ];
    const rates: number[][] = [[], [], []];
    for (let round = 0; round < ROUNDS; round++) {
      for (let k = 0; k < paths.length; k++) {
        const which = (round + k) % paths.length;
        rates[which].push(await paths[which]());
      }
    }
    // Each translation against the pass-through of its own round; the medians of those ratios are reported.
    const ratio = (which: number) => median(rates[which].map((r, i) => r / rates[0][i]));
    const [passthrough, translated, responsesTranslated] = rates.map(median);

    const direct = await firstTokenMs(`${fake.url}/v1/chat/completions`, {}, { ...chat, model: 'upstream-chat', stream: true }, '"content":"Hello');
    const passthroughTtft = await firstTokenMs(`${gw.url}/v1/chat/completions`, auth, { ...chat, stream: true }, '"content":"Hello');
    const translatedTtft = await firstTokenMs(`${gw.url}/v1/messages`, anthropic, { ...messages, stream: true }, '"text_delta"');

    return {
      'chat pass-through req/s': Math.round(passthrough),
      'messages-to-chat req/s': Math.round(translated),
      'messages-to-chat / pass-through, median of rounds (target >= 0.9)': Number(ratio(1).toFixed(3)),
      'responses-to-chat req/s': Math.round(responsesTranslated),
      'responses-translation / pass-through, median of rounds': Number(ratio(2).toFixed(3)),
      'direct stream first token p50 ms': Number(direct.toFixed(3)),
      'pass-through stream first token p50 ms': Number(passthroughTtft.toFixed(3)),
      'translated stream first token p50 ms': Number(translatedTtft.toFixed(3)),
      'translated stream added first-token ms vs direct': Number((translatedTtft - direct).toFixed(3)),
      'translated stream added first-token ms vs pass-through': Number((translatedTtft - passthroughTtft).toFixed(3)),
    };
  } finally {
    await gw.close();
    await fake.close();
  }
}

// `tsx bench/scenarios/translation.ts` runs this scenario alone.
if (import.meta.url === `file://${process.argv[1]}`) console.log(await run());
