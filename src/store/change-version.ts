// Tells caches when keys or workspaces may have changed: a trigger-maintained counter, whoever wrote the change.
import type { Db } from './database.js';

const readers = new WeakMap<Db, () => number>();

/** Registers a cheap synchronous read of the `auth` change counter (the SQLite backend has one). */
export function registerChangeDetector(db: Db, read: () => number): void {
  readers.set(db, read);
}

/** Differs whenever keys or workspaces changed; undefined when this backend cannot tell (then nothing is cached). */
export function changeVersion(db: Db): number | undefined {
  return readers.get(db)?.();
}
