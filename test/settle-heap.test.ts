// The heap's settling after a start (src/base/settle-heap.ts): full collections a gap apart that compact, none after a
// busy gap, and nothing left running once stopped.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { resettleWhenIdle, settleHeap } from '../src/base/settle-heap.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('settleHeap', () => {
  it('collects a gap apart until the young generation has shrunk, at most the rounds asked', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const settling = settleHeap({ rounds: 3, gapMs: 1_000, busyAbove: 1 });
    await vi.advanceTimersByTimeAsync(3_000);
    const collections = await settling.done;
    expect(collections).toBeGreaterThanOrEqual(2);
    expect(collections).toBeLessThanOrEqual(3);
    expect(typeof (globalThis as { gc?: unknown }).gc).toBe('undefined');
  });

  it('waits 5.5 s between collections by default (V8 shrinks the young generation after 5 s at a low allocation rate)', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let finished: number | undefined;
    const settling = settleHeap({ rounds: 2, busyAbove: 1 });
    void settling.done.then((collections) => (finished = collections));
    await vi.advanceTimersByTimeAsync(1_000 + 5_499);
    expect(finished).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(finished).toBe(2);
  });

  it('collects for real: code run once and dropped, as a module top level is, leaves the old generation', async () => {
    const oldUsed = () => getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!.space_used_size;
    const settle = async () => {
      const settling = settleHeap({ rounds: 2, firstGapMs: 10, gapMs: 10, busyAbove: 1 });
      await vi.advanceTimersByTimeAsync(20);
      await settling.done;
    };
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    let ran: unknown[] = [];
    for (let i = 0; i < 200; i++) {
      const once = new Function(`return ${Array.from({ length: 200 }, (_, j) => `${i} + ${j}`).join(' + ')};`);
      once();
      ran.push(once);
    }
    // Held through a first settling, so they are in the old generation (not the young, where a scavenge alone frees them).
    await settle();
    ran = [];
    const before = oldUsed();
    await settle();
    expect(ran).toHaveLength(0);
    expect(oldUsed()).toBeLessThan(before);
  });

  it('flushes the bytecode of code run once and still held, however young', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const used = () => getHeapSpaceStatistics().reduce((sum, space) => sum + space.space_used_size, 0);
    // About 2 MiB of bytecode: 500 functions of 300 terms each that no constant folding shortens.
    const ran: ((x: number) => number)[] = [];
    for (let i = 0; i < 500; i++) {
      const once = new Function('x', `return ${Array.from({ length: 300 }, (_, j) => `x * ${j + i}`).join(' + ')};`) as (x: number) => number;
      once(1);
      ran.push(once);
    }
    // One collection: the functions are old-generation objects, their bytecode one collection old (V8 flushes at five).
    gc();
    const before = used();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const settling = settleHeap({ rounds: 2, firstGapMs: 10, gapMs: 10, busyAbove: 1 });
    await vi.advanceTimersByTimeAsync(20);
    await settling.done;
    expect(used()).toBeLessThan(before - 1024 * 1024);
    // Flushed, not lost: each compiles again when called.
    expect(ran[0](1)).toBe((299 * 300) / 2);
  });

  it('compacts: old-generation pages the garbage left mostly empty are given back', async () => {
    const oldSpace = () => getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!;
    const settle = async () => {
      const settling = settleHeap({ rounds: 2, firstGapMs: 10, gapMs: 10, busyAbove: 1 });
      await vi.advanceTimersByTimeAsync(20);
      await settling.done;
    };
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    // Objects promoted to the old generation, then one in two dropped: every page keeps some, so none is empty.
    let kept: { n: number; s: string }[] = Array.from({ length: 300_000 }, (_, n) => ({ n, s: `item ${n}` }));
    await settle();
    kept = kept.filter((_, i) => i % 2 === 0);
    await settle();
    expect(kept).toHaveLength(150_000);
    // Left as they were, those half-empty pages would be about 11 MiB committed beyond what the old generation holds.
    const { physical_space_size: committed, space_used_size: used } = oldSpace();
    expect(committed - used).toBeLessThan(2 * 1024 * 1024);
  });

  it('skips a round whose gap the event loop spent busy, and counts only what it collected', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const settling = settleHeap({ rounds: 2, gapMs: 1_000, busyAbove: -1 });
    await vi.advanceTimersByTimeAsync(2_000);
    expect(await settling.done).toBe(0);
  });

  it('stops: no collection after stop(), and done says how many ran', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const settling = settleHeap({ rounds: 5, gapMs: 1_000, busyAbove: 1 });
    settling.stop();
    expect(vi.getTimerCount()).toBe(0);
    expect(await settling.done).toBe(0);
  });
});

describe('resettleWhenIdle', () => {
  afterEach(() => vi.useRealTimers());

  /** Looks at a scripted event loop: each look reads the next busy share. */
  function watch(shares: number[]) {
    vi.useFakeTimers();
    const settled: number[] = [];
    let look = 0;
    const watcher = resettleWhenIdle({ checkMs: 1_000, idleLooks: 3, utilization: () => shares[look++] ?? 0, settle: () => settled.push(look) });
    vi.advanceTimersByTime(shares.length * 1_000);
    watcher.stop();
    return settled;
  }

  it('settles once the process is idle for the looks after serving, and not again until it has served again', () => {
    expect(watch([0.5, 0.3, 0, 0, 0, 0, 0, 0, 0.4, 0, 0, 0])).toEqual([5, 12]);
  });

  it('never settles a process that has not served since it settled (or since it started: the start has its own)', () => {
    expect(watch([0, 0, 0, 0, 0, 0, 0.02, 0.03, 0, 0, 0])).toEqual([]);
  });

  it('waits while requests still trickle in (a look above the idle share starts the count again)', () => {
    expect(watch([0.6, 0, 0, 0.02, 0, 0, 0, 0.3, 0, 0, 0])).toEqual([7, 11]);
  });
});
