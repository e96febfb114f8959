// Loaded into a relay process with `node --import <abs path>/bench/alloc-sampler.mjs` (the gateway and the bare relay
// alike): V8's sampling heap profiler, collected objects included, so its samples add up to the bytes the process
// allocated, not the bytes it still holds. SIGUSR2 starts a window; the next SIGUSR2 ends it and writes
// `${BENCH_ALLOC_DIR}/alloc-<pid>-<n>.json`: { bytes, top: [[function at file:line, bytes], ...] } (bench/scenarios/allocations.ts).
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.BENCH_ALLOC_DIR;
const interval = Number(process.env.BENCH_ALLOC_INTERVAL ?? 1024);
const session = new Session();
session.connect();
let sampling = false;
let windows = 0;

async function toggle() {
  if (!sampling) {
    sampling = true;
    await session.post('HeapProfiler.enable');
    await session.post('HeapProfiler.startSampling', { samplingInterval: interval, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
    return;
  }
  sampling = false;
  const { profile } = await session.post('HeapProfiler.stopSampling');
  const byFunction = new Map();
  let bytes = 0;
  const walk = (node) => {
    if (node.selfSize) {
      const { functionName, url, lineNumber } = node.callFrame;
      const key = `${functionName || '(anonymous)'} ${url.replace(/^file:\/\//, '').replace(/.*\/(node_modules|src|dist|bench)\//, '$1/')}:${lineNumber + 1}`;
      byFunction.set(key, (byFunction.get(key) ?? 0) + node.selfSize);
      bytes += node.selfSize;
    }
    for (const child of node.children) walk(child);
  };
  walk(profile.head);
  const top = [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, Number(process.env.BENCH_ALLOC_TOP ?? 25));
  if (dir) writeFileSync(join(dir, `alloc-${process.pid}-${++windows}.json`), JSON.stringify({ bytes, top }));
}

process.on('SIGUSR2', () => void toggle());
