// The figure published gateway comparisons give: the most requests per second held while the upstream takes 20 ms to
// answer, with p99 under 1 s, errors under 0.1 % and the answers keeping up with the rate. An open-loop load (requests
// sent on a fixed schedule, each timed from when it was due, so a relay that falls behind is charged its queue) steps
// the rate up until a step fails, then halves the gap between the last step held and the first that failed
// (BENCH_CAPACITY_REFINE times, default 3): the ladder alone moves by 1.4x a step, so a ratio of two relays' held rates
// read off it could be off by 2x (a relay that just fails 700 reads 400, one that just fails 5,600 reads 4,000).
import { Pool } from 'undici';
import { chatBody, percentile, round } from './harness.js';

const stepSeconds = Number(process.env.BENCH_CAPACITY_SECONDS ?? 5);
const rates = [100, 200, 400, 700, 1000, 1400, 2000, 2800, 4000, 5600, 8000, 11000, 16000];
const refinements = Number(process.env.BENCH_CAPACITY_REFINE ?? 3);
/**
 * A step holds only when its answers kept up with it (this share of the rate, over the step and its last answer): a
 * relay falling behind builds a queue that a 5 s step's p99 may not yet show under 1 s (5,400 offered, 4,660 answered
 * a second, p99 751 ms). A relay that keeps up answers 97-99 % of the rate by this measure (the 20 ms of the last
 * answers and the client's own pacing).
 */
const KEEPS_UP = 0.95;

/** The rate halfway between two, to two significant figures (4,800 between 4,000 and 5,600; 550 between 400 and 700). */
function between(low: number, high: number): number {
  const mid = (low + high) / 2;
  const unit = 10 ** Math.max(0, Math.floor(Math.log10(mid)) - 1);
  return Math.round(mid / unit) * unit;
}

interface Step {
  rate: number;
  p99: number;
  errorShare: number;
  /** Answers a second over the step, from its start to its last answer. */
  achieved: number;
  /** What `sample` returned once the step's last request was sent (the relay at that rate). */
  sampled?: number;
}

/** Sends `rate` requests a second for `stepSeconds` on a schedule, each timed from when it was due. */
async function step(url: string, headers: Record<string, string>, rate: number, sample?: () => number): Promise<Step> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: 512, keepAliveTimeout: 30_000 });
  const body = chatBody();
  const total = rate * stepSeconds;
  const times: number[] = [];
  let errors = 0;
  const pending: Promise<void>[] = [];
  const started = performance.now();
  let sampled: number | undefined;
  try {
    for (let i = 0; i < total; i++) {
      const due = started + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      pending.push(
        pool
          .request({ method: 'POST', path: target.pathname, headers: { 'content-type': 'application/json', ...headers }, body, headersTimeout: 10_000, bodyTimeout: 10_000 })
          .then(async (res) => {
            await res.body.text();
            if (res.statusCode !== 200) errors++;
            else times.push(performance.now() - due);
          })
          .catch(() => void errors++),
      );
    }
    sampled = sample?.();
    await Promise.all(pending);
  } finally {
    await pool.close();
  }
  const achieved = (times.length * 1000) / (performance.now() - started);
  return { rate, p99: times.length ? percentile(times, 99) : Number.POSITIVE_INFINITY, errorShare: errors / total, achieved, sampled };
}

export interface Capacity {
  /** The highest rate whose step held (p99 < 1 s, errors < 0.1 %, answers at 95 % of the rate or more); 0 when none did. */
  held: number;
  /** Each step's rate, answers a second, p99 and errors, on the way up. */
  trail: string;
  /** What `sample` returned during the step that held last. */
  sampledAtHeld?: number;
}

/**
 * Steps the rate up the ladder until a step fails, then narrows the gap between the last held and the failed rate
 * (halving it `refinements` times); `sample` (e.g. the relay's RSS) is read near the end of each step.
 */
export async function capacity(url: string, headers: Record<string, string>, sample?: () => number): Promise<Capacity> {
  let held = 0;
  let failed: number | undefined;
  let sampledAtHeld: number | undefined;
  const trail: string[] = [];
  const tryRate = async (rate: number): Promise<boolean> => {
    const result = await step(url, headers, rate, sample);
    trail.push(`${rate} (${round(result.achieved, 0)} answered/s): p99 ${round(result.p99, 1)} ms${result.errorShare ? `, ${round(result.errorShare * 100, 2)} % errors` : ''}`);
    if (result.p99 >= 1000 || result.errorShare >= 0.001 || result.achieved < KEEPS_UP * rate) return false;
    held = rate;
    sampledAtHeld = result.sampled;
    return true;
  };
  for (const rate of rates) {
    if (!(await tryRate(rate))) {
      failed = rate;
      break;
    }
  }
  for (let i = 0; i < refinements && failed !== undefined && held > 0; i++) {
    const rate = between(held, failed);
    if (rate <= held || rate >= failed) break;
    if (!(await tryRate(rate))) failed = rate;
  }
  return { held, trail: trail.join('; '), sampledAtHeld };
}
