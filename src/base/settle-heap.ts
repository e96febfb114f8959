// Gives back, once a gateway process has started, the memory its start alone needed. Loading the config (every
// protocol's mappings compiled and their fixtures rendered), opening the stores and building the app run about 1,600
// modules' top-level code once: their bytecode (about 40 MiB) stays on the heap, and the young generation, grown to
// its largest (2 x 16 MiB) by the start's allocation rate, stays committed, because an idle process never collects
// again. A few full collections once the process listens (the first a second after, the others 5.5 s apart), flush the bytecode nothing runs any more
// (all of it, however young: SETTLING_FLAGS) and let V8 shrink the young generation (it does so only after a major
// collection after 5 s at a low allocation rate), and compact the old generation's half-empty pages (issue 52: idle RSS under
// 100 MiB a worker); each is followed by glibc's malloc_trim, which gives back what the C heap freed (malloc-trim.ts).
// The hot path's functions compile again on their first request (lazily, as at start).
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';
import { performance } from 'node:perf_hooks';
import { runInNewContext } from 'node:vm';
import { trimCHeap } from './malloc-trim.js';

export interface SettleOptions {
  /** Full collections at most (default 4); it stops earlier once the young generation has shrunk. */
  rounds?: number;
  /** Milliseconds before the first (default 1,000). */
  firstGapMs?: number;
  /**
   * Milliseconds between the later ones (default 5,500): V8 shrinks the young generation in a full collection only
   * when the allocation rate it measured over the last 5 s of collections is low, so a collection a second after the
   * first still counts the start's allocation (it took five and more at 1 s gaps, one at 5.5 s).
   */
  gapMs?: number;
  /** The event loop's busy share over a gap above which that round is skipped (default 0.05: requests are being served). */
  busyAbove?: number;
}

/** Young-generation bytes committed beyond its smallest size: a sign the settling is not done. */
const YOUNG_SETTLED_BYTES = 4 * 1024 * 1024;

function youngCommitted(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.physical_space_size ?? 0;
}

let madeCollector: (() => void) | undefined;
/**
 * V8's collector, as `--expose-gc` gives it: the flag set now is read by a context made after it. Made once a process
 * (each context made for it stays on the heap: every settling again made one more).
 */
function collector(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  if (!madeCollector) {
    setFlagsFromString('--expose-gc');
    madeCollector = runInNewContext('gc') as () => void;
  }
  return madeCollector;
}

/**
 * V8's flags for a settling collection alone (requests' collections are as before): compact the old generation (V8
 * compacts only pages it judges fragmented enough, so the pages the start's garbage left two-thirds empty stayed
 * committed: 7 MiB of old space, 12 MiB resident a worker, measured), and flush the bytecode and baseline code of every
 * function not running now, not only of those that sat through five collections (the start's run-once code that is
 * still young: 5 MiB of heap, measured).
 */
const SETTLING_FLAGS = ['--compact-on-every-full-gc', '--stress-flush-code', '--flush-baseline-code'];

function compacting(gc: () => void): void {
  setFlagsFromString(SETTLING_FLAGS.join(' '));
  try {
    gc();
  } finally {
    setFlagsFromString(SETTLING_FLAGS.map((flag) => flag.replace(/^--/, '--no-')).join(' '));
  }
}

/**
 * Starts settling the heap in the background (unref'd timers: it never holds the process open); stop() cancels what
 * is left. A round after a busy gap (requests being served) collects nothing and waits for the next one.
 */
export function settleHeap({ rounds = 4, firstGapMs = 1_000, gapMs = 5_500, busyAbove = 0.05 }: SettleOptions = {}): { stop(): void; done: Promise<number> } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let finish!: (collections: number) => void;
  const done = new Promise<number>((resolve) => (finish = resolve));
  let gc: (() => void) | undefined;
  let collections = 0;
  let left = rounds;
  // The gap is judged from the end of the last collection: its own time on the event loop is not a request's.
  let since = performance.eventLoopUtilization();
  const round = () => {
    if (stopped) return;
    if (performance.eventLoopUtilization(performance.eventLoopUtilization(), since).utilization <= busyAbove) {
      gc ??= collector();
      compacting(gc);
      // What the collection freed outside the JS heap (buffers, compiler zones) leaves glibc's arenas too.
      trimCHeap();
      collections++;
    }
    since = performance.eventLoopUtilization();
    left--;
    // Settled: two collections at least (the first flushes bytecode, a later one frees the pages it emptied).
    if (left <= 0 || (collections >= 2 && youngCommitted() <= YOUNG_SETTLED_BYTES)) return finish(collections);
    timer = setTimeout(round, gapMs).unref();
  };
  timer = setTimeout(round, firstGapMs).unref();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
      finish(collections);
    },
    done,
  };
}

export interface ResettleOptions {
  /** Milliseconds between looks at the event loop (default 10,000). */
  checkMs?: number;
  /** Consecutive idle looks after a busy one before settling again (default 3: 30 s without requests). */
  idleLooks?: number;
  /** The event loop's busy share over a look below which it counts as idle (default 0.01), above `busyAbove` as having served (0.05). */
  idleBelow?: number;
  busyAbove?: number;
  /** The busy share since the previous look (default: performance.eventLoopUtilization's). */
  utilization?: () => number;
  /** What settling again is (default: settleHeap's few collections). */
  settle?: () => void;
}

/**
 * Settles the heap again when a process goes idle after serving: load grows the young generation back to its largest
 * and leaves the hot path's garbage in the old one, and an idle process never collects again (a worker idle after a
 * run held ~160 MiB where it had settled to ~100). One unref'd look every `checkMs`; once it has been busy and then
 * idle for `idleLooks` looks, a settling runs, and not again until it has been busy again.
 */
export function resettleWhenIdle({ checkMs = 10_000, idleLooks = 3, idleBelow = 0.01, busyAbove = 0.05, utilization, settle }: ResettleOptions = {}): { stop(): void } {
  let last = performance.eventLoopUtilization();
  const busyShare =
    utilization ??
    (() => {
      const now = performance.eventLoopUtilization();
      const share = performance.eventLoopUtilization(now, last).utilization;
      last = now;
      return share;
    });
  let settling: { stop(): void } | undefined;
  const again = settle ?? (() => (settling = settleHeap({ rounds: 4 })));
  let served = false;
  let idle = 0;
  const timer = setInterval(() => {
    const share = busyShare();
    if (share > busyAbove) served = true;
    // Anything but quiet (a trickle of requests included) starts the count of idle looks again.
    if (share >= idleBelow) idle = 0;
    else if (served && ++idle >= idleLooks) {
      served = false;
      idle = 0;
      again();
    }
  }, checkMs).unref();
  return {
    stop() {
      clearInterval(timer);
      settling?.stop();
    },
  };
}
