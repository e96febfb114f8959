// Benchmark: 1,000 concurrent slow streams through the gateway: RSS per open stream, every chunk delivered in order,
// and how many the upstream saw open at once (a relay's connection pool must not queue them).
// The gateway runs in this process and the clients in a child process, so the RSS measured is the gateway's own.
import { spawn } from 'node:child_process';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { startGateway } from '../../test/kit/gateway.js';
import { round, startMock } from '../harness.js';

export const name = 'concurrent streams';

const STREAMS = 1000;
/** Between the mock's chunks: six of them keep every stream open for about five seconds, long enough for all to be open at once. */
const CHUNK_DELAY_MS = 1000;
const EXPECTED = 'Bench answer with a few words.';

/** COUNT clients each open a stream; prints, for each, whether its text arrived whole and in order and it ended. */
const clientScript = `
import { Agent, request } from 'undici';
const { URL_, KEY, COUNT } = process.env;
const dispatcher = new Agent({ connections: Number(COUNT) + 10, keepAliveTimeout: 10_000 });
const body = JSON.stringify({ model: 'bench-chat', stream: true, max_tokens: 16, messages: [{ role: 'user', content: 'Benchmark prompt, short.' }] });
let firstChunks = 0;
const one = async () => {
  const res = await request(URL_ + '/v1/chat/completions', { method: 'POST', dispatcher, headers: { authorization: 'Bearer ' + KEY, 'content-type': 'application/json' }, body });
  let text = '';
  let first = true;
  for await (const part of res.body) {
    if (first) { first = false; if (++firstChunks === Number(COUNT)) process.stderr.write('ALL_OPEN\\n'); }
    text += part;
  }
  const events = text.split('\\n\\n').filter((e) => e.startsWith('data: ')).map((e) => e.slice(6));
  const done = events.at(-1) === '[DONE]';
  const content = events.filter((e) => e !== '[DONE]').map((e) => JSON.parse(e).choices?.[0]?.delta?.content ?? '').join('');
  return { status: res.statusCode, done, content };
};
const results = await Promise.all(Array.from({ length: Number(COUNT) }, one));
process.stdout.write(JSON.stringify(results));
`;

interface StreamResult {
  status: number;
  done: boolean;
  content: string;
}

function runClients(url: string, key: string, count: number, onAllOpen: () => void): Promise<StreamResult[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', clientScript], {
      cwd: process.cwd(),
      env: { ...process.env, URL_: url, KEY: key, COUNT: String(count) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => String(d).includes('ALL_OPEN') && onAllOpen());
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`stream clients exited ${code}`))));
  });
}

export async function run(): Promise<Record<string, number | string>> {
  const mock = await startMock({ CHUNK_DELAY_MS: String(CHUNK_DELAY_MS) });
  const channel = `id: bench\nprotocol: openai-chat\nbaseUrl: ${mock.url}/v1\nmodels:\n  - id: bench-chat\n    upstream: bench-upstream\n    kind: chat\n    price: { inputPerMillion: 1.0, outputPerMillion: 2.0 }\n`;
  const gw = await startGateway({ listen: true, channels: { bench: channel } });
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  try {
    await runClients(gw.url, gw.key, 200, () => undefined); // warm-up: JIT, pools
    await fetch(`${mock.url}/stats`);
    gc();
    const baseline = process.memoryUsage.rss();
    let peak = baseline;
    let whileOpen = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 5);
    let results: StreamResult[];
    try {
      results = await runClients(gw.url, gw.key, STREAMS, () => (whileOpen = process.memoryUsage.rss()));
    } finally {
      clearInterval(sampler);
    }
    const stats = (await (await fetch(`${mock.url}/stats`)).json()) as { mostOpenStreams: number };
    const whole = results.filter((r) => r.status === 200 && r.done && r.content === EXPECTED).length;
    return {
      streams: STREAMS,
      'streams delivered whole and in order': whole,
      'most streams open upstream at once': stats.mostOpenStreams,
      'gateway RSS growth with all streams open MiB': round((whileOpen - baseline) / 2 ** 20, 1),
      'RSS per open stream KiB (target <= 64)': round((whileOpen - baseline) / STREAMS / 1024, 1),
      'peak RSS per stream KiB': round((peak - baseline) / STREAMS / 1024, 1),
    };
  } finally {
    await gw.close();
    await mock.stop();
  }
}
