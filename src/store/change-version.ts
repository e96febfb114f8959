// Tells caches when keys or workspaces may have changed: a trigger-maintained counter, whoever wrote the change.
import type { Db } from './db.js';

const readers = new WeakMap<Db, () => number>();

/** Registers a cheap synchronous read of the `auth` change counter (the SQLite backend has one). */
export function registerChangeDetector(db: Db, read: () => number): void {
  readers.set(db, read);
}

/**
 * The counter as read in this turn of the event loop. Requests that arrive together share one read (the
 * check costs a database statement); a change committed by any process is seen from the next turn on.
 */
let readThisTurn: Map<Db, number> | undefined;
const forgetTurn = () => {
  readThisTurn = undefined;
};

/** Differs whenever keys or workspaces changed; undefined when this backend cannot tell (then nothing is cached). */
export function changeVersion(db: Db): number | undefined {
  const read = readers.get(db);
  if (!read) return undefined;
  if (!readThisTurn) {
    readThisTurn = new Map();
    setImmediate(forgetTurn);
  }
  let version = readThisTurn.get(db);
  if (version === undefined) {
    version = read();
    readThisTurn.set(db, version);
  }
  return version;
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
