// Loaded into a gateway with `node --import <abs path>/bench/gc-windows.mjs`: counts the collector's runs by kind
// (scavenge, mark-compact, incremental marking, weak callbacks) and their main-thread pause time, and at each SIGUSR2
// appends the running totals as one JSON line to `${BENCH_GC_DIR}/gc-<pid>.jsonl`; the bench takes the difference of
// two lines around a load window (bench/profile-compare.ts). Shares the signal with bench/alloc-sampler.mjs.
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants, PerformanceObserver } from 'node:perf_hooks';

const dir = process.env.BENCH_GC_DIR;
const kinds = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};
const totals = { minor: 0, major: 0, incremental: 0, weakcb: 0, minorMs: 0, majorMs: 0, incrementalMs: 0, weakcbMs: 0 };
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    const kind = kinds[entry.detail?.kind] ?? 'weakcb';
    totals[kind]++;
    totals[`${kind}Ms`] += entry.duration;
  }
}).observe({ entryTypes: ['gc'] });

process.on('SIGUSR2', () => {
  // The observer's entries arrive a turn late: read the totals on the next one.
  setImmediate(() => {
    if (dir) appendFileSync(join(dir, `gc-${process.pid}.jsonl`), `${JSON.stringify({ ...totals, heapUsed: process.memoryUsage().heapUsed })}\n`);
  });
});
