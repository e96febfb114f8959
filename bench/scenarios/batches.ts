// Interactive requests while the gateway runs a batch itself (issue 51: "interactive requests meanwhile unslowed, p50
// within 10 % of before"): chat pass-through at c=1 on one worker, in rounds that alternate without a batch and while a
// 20,000-line batch runs on the same channel at the configured rate (created for the round, cancelled after it), so
// the machine's drift falls on both alike; at the default rate (8 lines a second) and at a pressing one
// (BENCH_BATCH_PRESSING=1: 100 lines every 100 ms, 4 in flight). Each round's ratio is its p50 with the batch over the
// mean of the p50s without it just before and just after; the gateway's CPU a request (the whole process, /proc) beside.
import { readFileSync } from 'node:fs';
import { chatBody, percentile, round, sequentialTimes, startBenchGateway, startMock } from '../harness.js';

export const name = 'interactive requests while a batch runs';

const lines = Number(process.env.BENCH_BATCH_LINES ?? 20_000);
const count = Number(process.env.BENCH_BATCH_COUNT ?? 1000);
const rounds = Number(process.env.BENCH_BATCH_ROUNDS ?? 4);
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

/** The process's CPU time so far (user + system, all its threads), ms. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * (1000 / 100);
}

const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

export async function run(): Promise<Record<string, number | string>> {
  const mock = await startMock();
  const gw = await startBenchGateway(mock.url, { extraConfig: tasks });
  const chat = `${gw.url}/v1/chat/completions`;
  const headers = { authorization: `Bearer ${gw.key}` };
  /** p50 (ms) and the gateway's CPU a request (µs) of one stretch of sequential requests. */
  const measure = async () => {
    const c0 = cpuMs(gw.pid);
    const times = await sequentialTimes(chat, headers, chatBody(), count);
    return { p50: percentile(times, 50), times, cpuUs: ((cpuMs(gw.pid) - c0) * 1000) / count };
  };
  try {
    const loadBefore = loadAverage();
    // Warm well past the JIT: a short warm-up left the first stretch slower than the last by a quarter.
    await sequentialTimes(chat, headers, chatBody(), 4000);
    const without = [await measure()];
    const during: Awaited<ReturnType<typeof measure>>[] = [];
    let rate = 0;
    let stillRunning = true;
    for (let r = 0; r < rounds; r++) {
      const id = await startBatch(gw.url, gw.key);
      // Measured once lines are flowing, and after what creating the batch set off (its line rows written, the WAL they
      // grew checkpointed): the figure is of a batch running, not of one being created.
      for (let i = 0; i < 100 && (await batchCounts(gw.url, gw.key, id)).completed === 0; i++) await new Promise((res) => setTimeout(res, 100));
      await new Promise((res) => setTimeout(res, Number(process.env.BENCH_BATCH_SETTLE_MS ?? 5000)));
      const startedWith = await batchCounts(gw.url, gw.key, id);
      const t0 = performance.now();
      during.push(await measure());
      const seconds = (performance.now() - t0) / 1000;
      const endedWith = await batchCounts(gw.url, gw.key, id);
      rate += (endedWith.completed - startedWith.completed) / seconds / rounds;
      stillRunning &&= endedWith.status === 'in_progress';
      await fetch(`${gw.url}/v1/batches/${id}/cancel`, { method: 'POST', headers });
      for (let i = 0; i < 100 && (await batchCounts(gw.url, gw.key, id)).status !== 'cancelled'; i++) await new Promise((res) => setTimeout(res, 100));
      await new Promise((res) => setTimeout(res, 1000));
      without.push(await measure());
    }
    const ratios = during.map((d, r) => d.p50 / ((without[r].p50 + without[r + 1].p50) / 2));
    const pooled = (list: { times: number[] }[]) => percentile(list.flatMap((m) => m.times), 50);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const p50s = (list: { p50: number }[]) => list.map((m) => round(m.p50)).join(' ');
    return {
      [`interactive p50 ms, c=1, ${count} requests a stretch: without a batch (each stretch)`]: p50s(without),
      'interactive p50 ms: while the batch runs (each round)': p50s(during),
      'interactive p50 while the batch runs / without (median of the rounds; target <= 1.10)': round(percentile(ratios, 50)),
      'each round: p50 with the batch / mean of the stretches without it around it': ratios.map((x) => round(x)).join(' '),
      'pooled p50 with / without': round(pooled(during) / pooled(without)),
      'gateway CPU µs a request (whole process): with / without the batch': `${round(mean(during.map((d) => d.cpuUs)))} / ${round(mean(without.map((d) => d.cpuUs)))}`,
      [`batch lines completed a second meanwhile (${tasks ? 'pressing rate, at most 1,000' : 'default rate, at most 8'})`]: round(rate, 0),
      'batch still running when each measurement ended': stillRunning ? 'yes' : 'no',
      'load average at the start / the end': `${loadBefore} / ${loadAverage()}`,
    };
  } finally {
    await gw.stop();
    await mock.stop();
  }
}
