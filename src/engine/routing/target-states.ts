// What a process knows of each route target while it serves: requests in flight, recent latency (EWMA), recent
// failures and cooldowns. Kept beside the upstream pools of a snapshot; a reload starts afresh. Cooldowns may also be
// shared across processes (cooldown-share.ts).
import type { RouteNode } from '../../config/types.js';
import type { CooldownShare } from './cooldown-share.js';

/** How often a process reads a target's shared cooldown. */
const SHARED_READ_MS = 1000;

/** Weight of the newest latency sample in the moving average. */
const EWMA_ALPHA = 0.3;

export class TargetState {
  inFlight = 0;
  /** Moving average of the time to the answer's head, in ms; undefined until the first answer. */
  latencyMs: number | undefined;
  /** When the latest latency sample came (the clock's ms): the latency strategy probes the stalest target now and then. */
  sampledAt = 0;
  /** Times of recent failures within the cooldown window. */
  private failures: number[] = [];
  cooledUntil = 0;
  /** When the shared cooldown was last read (the clock's ms). */
  sharedReadAt = -Infinity;
  /** Ends one request's hold on this target (made once: a routed call holds its answering target until it ends). */
  readonly release = (): void => void this.inFlight--;

  observeLatency(ms: number, now: number): void {
    // A target answering in under half its average has recovered (a probe found it so): believed at once, where the
    // average would take a dozen probes, a hundred requests, to come down.
    this.latencyMs = this.latencyMs === undefined || ms < this.latencyMs / 2 ? ms : this.latencyMs + EWMA_ALPHA * (ms - this.latencyMs);
    this.sampledAt = now;
  }

  /** Counts a failure; true when it cools the target (`failures` of them within the window). */
  failed(cooldown: NonNullable<RouteNode['cooldown']>, now: number): boolean {
    const since = now - cooldown.windowSeconds * 1000;
    this.failures = this.failures.filter((at) => at > since);
    this.failures.push(now);
    if (this.failures.length < cooldown.failures) return false;
    this.failures = [];
    this.cooledUntil = now + cooldown.seconds * 1000;
    return true;
  }

  cooling(now: number): boolean {
    return this.cooledUntil > now;
  }
}

/** Every target's state, and each route's own (its weighted cycle, its request count). */
export class RouterState {
  private readonly targets = new Map<string, TargetState>();
  /** Smooth weighted round robin: each route's running weights, one a target. */
  private readonly cycles = new Map<RouteNode, number[]>();
  private readonly counts = new Map<RouteNode, number>();

  constructor(
    readonly now: () => number,
    private readonly share?: CooldownShare,
  ) {}

  /** Whether `target` is cooling, here or (read at most once a second) in another process sharing the cache. */
  async cooling(target: string, state: TargetState): Promise<boolean> {
    const now = this.now();
    if (this.share && now - state.sharedReadAt >= SHARED_READ_MS) {
      state.sharedReadAt = now;
      const until = await this.share.read(target);
      if (until !== undefined && until > state.cooledUntil) state.cooledUntil = until;
    }
    return state.cooling(now);
  }

  /** Counts a failure of `target` under `node`'s cooldown; true when it cools the target (then told to the other processes). */
  failed(target: string, state: TargetState, cooldown: NonNullable<RouteNode['cooldown']>): boolean {
    if (!state.failed(cooldown, this.now())) return false;
    this.share?.write(target, state.cooledUntil, cooldown.seconds * 1000);
    return true;
  }

  target(name: string): TargetState {
    let state = this.targets.get(name);
    if (!state) this.targets.set(name, (state = new TargetState()));
    return state;
  }

  /** The index of the next target of `node` by weight (nginx's smooth weighted round robin: exact over each cycle, interleaved). */
  nextByWeight(node: RouteNode): number {
    let current = this.cycles.get(node);
    if (!current) this.cycles.set(node, (current = node.targets.map(() => 0)));
    let best = 0;
    let total = 0;
    for (let i = 0; i < current.length; i++) {
      const weight = node.targets[i].weight;
      current[i] += weight;
      total += weight;
      if (current[i] > current[best]) best = i;
    }
    current[best] -= total;
    return best;
  }

  /** Counts a request of `node`; its number (from 1). */
  count(node: RouteNode): number {
    const n = (this.counts.get(node) ?? 0) + 1;
    this.counts.set(node, n);
    return n;
  }
}
