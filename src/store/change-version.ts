// Tells caches when keys, workspaces or caps may have changed: a trigger-maintained counter, whoever wrote the change,
// read again only when the change signal (change-signal.ts) says some process moved it, or a second after the last read.
import type { Db } from './db.js';

/**
 * How long a counter read stands without a signal, unless told (storage.database.recheckSeconds). A write that bypasses
 * the gateway's code (the sqlite3 shell) touches no epoch file: caches see it this long after at the latest.
 */
export const RECHECK_MS = 1000;

/** What the database side tells the detector of one database. */
export interface ChangeDetector {
  /** Some process announced a change: read the counter again before the next answer. */
  stale(): void;
  /** After a commit of this process: reads the counter now; true when it moved since the last read. */
  moved(): boolean;
  /** No signal can be had (the file cannot be watched): read again in every turn of the event loop, as before. */
  unwatched(): void;
}

class Detector implements ChangeDetector {
  private version = 0;
  private readAt = 0;
  private isStale = false;
  private perTurn = false;
  private readonly markStale = () => void (this.isStale = true);

  constructor(
    private readonly read: () => number,
    private readonly recheckMs: number,
    private readonly now: () => number,
  ) {
    // Read once now, so that the first commit of this process tells a move from no move.
    this.refresh();
  }

  current(): number {
    if (this.isStale || this.now() - this.readAt >= this.recheckMs) this.refresh();
    return this.version;
  }

  stale(): void {
    this.isStale = true;
  }

  moved(): boolean {
    const before = this.version;
    this.refresh();
    return this.version !== before;
  }

  unwatched(): void {
    this.perTurn = true;
    this.isStale = true;
  }

  private refresh(): void {
    this.version = this.read();
    this.readAt = this.now();
    this.isStale = false;
    // Requests that arrive in one turn share the read; the next turn reads again.
    if (this.perTurn) setImmediate(this.markStale);
  }
}

const detectors = new WeakMap<Db, Detector>();

export interface DetectorOptions {
  /** How long a read stands without a signal (default RECHECK_MS). */
  recheckMs?: number;
  /** A monotonic clock in ms (tests pass their own). */
  now?: () => number;
}

/**
 * Registers a cheap synchronous read of the `auth` change counter (the SQLite backend has one) and returns what the
 * change signal and the commits of this process call.
 */
export function registerChangeDetector(db: Db, read: () => number, { recheckMs = RECHECK_MS, now = () => performance.now() }: DetectorOptions = {}): ChangeDetector {
  const detector = new Detector(read, recheckMs, now);
  detectors.set(db, detector);
  return detector;
}

/**
 * Differs whenever keys or workspaces changed; undefined when this backend cannot tell (then nothing is cached).
 * Reads the database only after a signal, a commit of this process or the safety interval: not per request.
 */
export function changeVersion(db: Db): number | undefined {
  return detectors.get(db)?.current();
}

/**
 * Entries derived from keys and workspaces, kept while the change counter stands still: `at(version)` hands out the
 * entries of that version, emptied whenever the version moved (and when they reach `limit`, so memory stays bounded).
 */
export class ChangeCache<V> {
  private version: number | undefined;
  private entries = new Map<string, V>();

  constructor(private readonly limit = 10_000) {}

  at(version: number): Map<string, V> {
    if (version !== this.version) {
      this.version = version;
      this.entries = new Map();
    } else if (this.entries.size >= this.limit) {
      this.entries.clear();
    }
    return this.entries;
  }
}
