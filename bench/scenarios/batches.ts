// Interactive requests while the gateway runs a batch itself (issue 51: "interactive requests meanwhile unslowed, p50
// within 10 % of before"): chat pass-through at c=1 on one worker, before a batch, while 20,000 batch lines run on the
// same channel at the configured rate, and after it was cancelled; at the default rate (8 lines a second) and at a
// pressing one (BENCH_BATCH_PRESSING=1: 100 lines every 100 ms, 4 in flight).
import { chatBody, percentile, round, sequentialTimes, startBenchGateway, startMock } from '../harness.js';

export const name = 'interactive requests while a batch runs';

const lines = Number(process.env.BENCH_BATCH_LINES ?? 20_000);
const count = Number(process.env.BENCH_BATCH_COUNT ?? 2000);
const tasks = process.env.BENCH_BATCH_PRESSING ? 'tasks:\n  tickMilliseconds: 100\n  batches: { linesPerTick: 100, inFlightPerChannel: 4 }\n' : '';

async function startBatch(url: string, key: string): Promise<string> {
  const jsonl = Array.from({ length: lines }, (_, i) => JSON.stringify({ custom_id: `l${i}`, method: 'POST', url: '/v1/chat/completions', body: JSON.parse(chatBody()) })).join('\n');
  const form = new FormData();
  form.set('purpose', 'batch');
  form.set('file', new Blob([jsonl]), 'input.jsonl');
  const headers = { authorization: `Bearer ${key}` };
  const file = (await (await fetch(`${url}/v1/files`, { method: 'POST', headers, body: form })).json()) as { id: string };
  const created = await fetch(`${url}/v1/batches`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }) });
  if (created.status !== 200) throw new Error(`batch create: ${created.status} ${await created.text()}`);
  return ((await created.json()) as { id: string }).id;
}

async function batchCounts(url: string, key: string, id: string): Promise<{ status: string; completed: number }> {
  const batch = (await (await fetch(`${url}/v1/batches/${id}`, { headers: { authorization: `Bearer ${key}` } })).json()) as { status: string; request_counts: { completed: number } };
  return { status: batch.status, completed: batch.request_counts.completed };
}

export async function run(): Promise<Record<string, number | string>> {
  const mock = await startMock();
  const gw = await startBenchGateway(mock.url, { extraConfig: tasks });
  const chat = `${gw.url}/v1/chat/completions`;
  const headers = { authorization: `Bearer ${gw.key}` };
  try {
    // Warm well past the JIT: a short warm-up left "before" slower than "after" by a quarter.
    await sequentialTimes(chat, headers, chatBody(), 4000);
    const before = await sequentialTimes(chat, headers, chatBody(), count);
    const id = await startBatch(gw.url, gw.key);
    // Measured once lines are flowing.
    for (let i = 0; i < 100 && (await batchCounts(gw.url, gw.key, id)).completed === 0; i++) await new Promise((r) => setTimeout(r, 100));
    // What creating the batch set off (its 20,000 line rows written, the WAL they grew checkpointed) left alone first:
    // the figure is of a batch running, not of one being created.
    await new Promise((r) => setTimeout(r, Number(process.env.BENCH_BATCH_SETTLE_MS ?? 5000)));
    const startedWith = await batchCounts(gw.url, gw.key, id);
    const t0 = performance.now();
    const during = await sequentialTimes(chat, headers, chatBody(), count);
    const seconds = (performance.now() - t0) / 1000;
    const endedWith = await batchCounts(gw.url, gw.key, id);
    await fetch(`${gw.url}/v1/batches/${id}/cancel`, { method: 'POST', headers });
    await new Promise((r) => setTimeout(r, 1000));
    const after = await sequentialTimes(chat, headers, chatBody(), count);
    const p50 = (times: number[]) => percentile(times, 50);
    const p99 = (times: number[]) => percentile(times, 99);
    const quiet = (p50(before) + p50(after)) / 2;
    return {
      [`interactive p50 / p99 ms, c=1, ${count} requests: before the batch`]: `${round(p50(before))} / ${round(p99(before))}`,
      'interactive p50 / p99 ms: while the batch runs': `${round(p50(during))} / ${round(p99(during))}`,
      'interactive p50 / p99 ms: after it was cancelled': `${round(p50(after))} / ${round(p99(after))}`,
      'interactive p50 while the batch runs / without (mean of before and after; target <= 1.10)': round(p50(during) / quiet),
      'interactive p50 while the batch runs / before it': round(p50(during) / p50(before)),
      [`batch lines completed a second meanwhile (${tasks ? 'pressing rate, at most 1,000' : 'default rate, at most 8'})`]: round((endedWith.completed - startedWith.completed) / seconds, 0),
      'batch still running when the measurement ended': endedWith.status === 'in_progress' ? 'yes' : `no (${endedWith.status})`,
    };
  } finally {
    await gw.stop();
    await mock.stop();
  }
}
