// Leases: a named unit of background work held by one process until a time; taken over only once it has run out.
import type { Db } from './database.js';

/**
 * Takes (or renews) the lease `name` for `owner` until `now + ttlMs`, in one statement: an insert, or an update that
 * only applies when the lease has run out or is already this owner's. True when `owner` holds it afterwards.
 */
export async function acquireLease(db: Db, name: string, owner: string, ttlMs: number, now = Date.now()): Promise<boolean> {
  const result = await db
    .insertInto('leases')
    .values({ name, owner, until: now + ttlMs })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet({ owner, until: now + ttlMs })
        .where((eb) => eb.or([eb('leases.until', '<=', now), eb('leases.owner', '=', owner)])),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Gives a lease back early (its work is done), so another process need not wait for it to run out. */
export async function releaseLease(db: Db, name: string, owner: string): Promise<void> {
  await db.deleteFrom('leases').where('name', '=', name).where('owner', '=', owner).execute();
}

/** Runs `work` only if this process can take the lease; false when another holds it. */
export async function withLease(db: Db, name: string, owner: string, ttlMs: number, work: () => Promise<void>): Promise<boolean> {
  if (!(await acquireLease(db, name, owner, ttlMs))) return false;
  try {
    await work();
  } finally {
    await releaseLease(db, name, owner);
  }
  return true;
}
