// A channel's key pool at run time: which entry serves the next request (smooth weighted round robin over the entries not
// resting), and how long an entry rests after the upstream refused it (429: its retry-after, else the channel's default;
// 401: longer, as a revoked key). Per process; nothing here knows a secret, only the entries' labels.

export interface KeyCooldown {
  /** After a 429 without retry-after, and the most a retry-after is honoured for. */
  seconds: number;
  /** After a 401. */
  revokedSeconds: number;
}

export type KeyState = 'serving' | 'cooling' | 'revoked';

/** What a refusal changed, for the caller's log: a key newly revoked is logged once, not on every probe that fails again. */
export type Refusal = { state: 'cooling' | 'revoked'; changed: boolean; seconds: number };

interface Slot<T> {
  entry: T;
  weight: number;
  /** Smooth weighted round robin's running score (nginx's algorithm: deterministic, spread evenly within each round). */
  current: number;
  /** Unix milliseconds until which the entry rests. */
  restsUntil: number;
  revoked: boolean;
}

export class KeyPool<T extends { weight: number }> {
  private readonly slots: Slot<T>[];

  constructor(
    entries: readonly T[],
    private readonly cooldown: KeyCooldown,
    private readonly now: () => number,
  ) {
    this.slots = entries.map((entry) => ({ entry, weight: entry.weight, current: 0, restsUntil: 0, revoked: false }));
  }

  /**
   * The entry for the next attempt: the best by weight among those not resting and not in `tried`. When none is left
   * and the request has met no 429 yet (`limited`), the resting entry not yet tried that is back soonest and not
   * revoked: the upstream then answers the request itself (its 429, or its answer if its limit lifted early). Undefined
   * when every entry left is revoked, or a 429 was met and no entry is free.
   */
  pick(tried?: ReadonlySet<T>, limited = false): T | undefined {
    const now = this.now();
    let total = 0;
    let best: Slot<T> | undefined;
    for (const slot of this.slots) {
      if (slot.restsUntil > now || tried?.has(slot.entry)) continue;
      slot.current += slot.weight;
      total += slot.weight;
      if (!best || slot.current > best.current) best = slot;
    }
    if (best) {
      best.current -= total;
      return best.entry;
    }
    if (limited) return undefined;
    let soonest: Slot<T> | undefined;
    for (const slot of this.slots) if (!slot.revoked && !tried?.has(slot.entry) && (!soonest || slot.restsUntil < soonest.restsUntil)) soonest = slot;
    return soonest?.entry;
  }

  /** Seconds until the first revoked entry may be tried again (every entry revoked). */
  retryInSeconds(): number {
    const back = Math.min(...this.slots.map((slot) => slot.restsUntil));
    return Math.max(1, Math.ceil((back - this.now()) / 1000));
  }

  /** The upstream refused `entry` (429 or 401): it rests, and a 401 marks it revoked until it serves again. */
  refused(entry: T, status: number, retryAfter: unknown): Refusal {
    const slot = this.slotOf(entry);
    const revoked = status === 401;
    const seconds = revoked ? this.cooldown.revokedSeconds : Math.min(retryAfterSeconds(retryAfter, this.now()) ?? this.cooldown.seconds, this.cooldown.revokedSeconds);
    const changed = revoked && !slot.revoked;
    slot.revoked ||= revoked;
    slot.restsUntil = this.now() + seconds * 1000;
    return { state: slot.revoked ? 'revoked' : 'cooling', changed, seconds };
  }

  /** The upstream took `entry`: true when it had been revoked (its return is logged once). */
  served(entry: T): boolean {
    const slot = this.slotOf(entry);
    const was = slot.revoked;
    slot.revoked = false;
    slot.restsUntil = 0;
    return was;
  }

  /** Each entry's state now, for /readyz and /metrics. */
  states(): { entry: T; state: KeyState }[] {
    const now = this.now();
    return this.slots.map((slot) => ({ entry: slot.entry, state: slot.revoked ? 'revoked' : slot.restsUntil > now ? 'cooling' : 'serving' }));
  }

  private slotOf(entry: T): Slot<T> {
    return this.slots.find((slot) => slot.entry === entry)!;
  }
}

/** Seconds a `retry-after` header asks for (seconds, or an HTTP date), or undefined. */
function retryAfterSeconds(value: unknown, now: number): number | undefined {
  if (typeof value !== 'string' || !value) return undefined;
  const seconds = Number(value);
  const asked = Number.isFinite(seconds) ? seconds : (new Date(value).getTime() - now) / 1000;
  return Number.isFinite(asked) && asked > 0 ? asked : undefined;
}
