// The runtime snapshot: config, routes, compiled mappings and upstream pools as one immutable whole. A reload swaps it;
// requests keep the snapshot they began on, and a replaced snapshot's pools close when its last request ends.
import type { LoadedConfig } from './loaded-config.js';
import type { Upstreams } from './upstream.js';

export interface Snapshot {
  config: LoadedConfig;
  upstreams: Upstreams;
}

interface Held {
  snapshot: Snapshot;
  inFlight: number;
  retired: boolean;
  closed?: Promise<void>;
}

/** One request's hold on a snapshot; `release()` lets go of it once, however often it is called. */
export class SnapshotHold {
  private released = false;

  constructor(
    private readonly runtime: Runtime,
    private readonly held: Held,
  ) {}

  get snapshot(): Snapshot {
    return this.held.snapshot;
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.runtime.letGo(this.held);
  }
}

export class Runtime {
  private current: Held;
  private readonly retiring = new Set<Held>();

  constructor(snapshot: Snapshot) {
    this.current = { snapshot, inFlight: 0, retired: false };
  }

  get snapshot(): Snapshot {
    return this.current.snapshot;
  }

  /** The current snapshot, held for one request until `release()`: a reload meanwhile does not touch it. */
  hold(): SnapshotHold {
    const held = this.current;
    held.inFlight++;
    return new SnapshotHold(this, held);
  }

  /** A hold ended (called once per hold, by SnapshotHold). */
  letGo(held: Held): void {
    held.inFlight--;
    this.closeIfDrained(held);
  }

  /** Makes `next` current, atomically for every request that starts from now on. */
  swap(next: Snapshot): void {
    const previous = this.current;
    this.current = { snapshot: next, inFlight: 0, retired: false };
    previous.retired = true;
    this.retiring.add(previous);
    this.closeIfDrained(previous);
  }

  /** Requests still running on replaced snapshots. */
  get draining(): number {
    return [...this.retiring].reduce((n, held) => n + held.inFlight, 0);
  }

  async close(): Promise<void> {
    await Promise.all([...this.retiring].map((held) => held.closed ?? held.snapshot.upstreams.close()));
    await this.current.snapshot.upstreams.close();
  }

  private closeIfDrained(held: Held): void {
    if (!held.retired || held.inFlight > 0 || held.closed) return;
    held.closed = held.snapshot.upstreams.close().finally(() => this.retiring.delete(held));
  }
}
