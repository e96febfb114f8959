// Tells caches when keys or workspaces may have changed: a trigger-maintained counter, whoever wrote the change.
import type { Db } from './database.js';

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
