import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './kit/gateway.js';

// glibc keeps what free() returned below a live allocation in its arena; malloc_trim gives those pages back.
describe("glibc's malloc_trim through koffi (src/base/malloc-trim.ts)", () => {
  it.runIf(process.platform === 'linux')("gives back the C heap's free pages that free() kept, and says so", () => {
    const script = `import { readFileSync } from 'node:fs';
import { trimCHeap } from './src/base/malloc-trim.ts';
const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) / 1024;
let held = [];
for (let i = 0; i < 12000; i++) held.push(Buffer.allocUnsafeSlow(8192).fill(1));
const last = Buffer.allocUnsafeSlow(8192).fill(1);
held = undefined;
globalThis.gc(); globalThis.gc();
const before = rss();
const released = trimCHeap();
const after = rss();
console.log(JSON.stringify({ released, before, after, kept: last.length }));`;
    const out = execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', script], { cwd: repoRoot, encoding: 'utf8', env: { ...process.env, MALLOC_ARENA_MAX: '2' } });
    const { released, before, after } = JSON.parse(out.trim().split('\n').pop()!);
    expect(released).toBe(true);
    // About 94 MiB of buffers were freed; most of it was still resident before the trim.
    expect(before - after).toBeGreaterThan(40);
  }, 60_000);
});
