// Which process holds a spend reservation, and whether that process is provably gone. Each reservation id ends with its
// process's tag, and each process keeps a heartbeat lease (`process:<tag>`) while it runs. After a kill -9, the sweep
// releases what a dead process held instead of letting it hold the cap for billing.reservationTtlSeconds. Provably
// dead: its heartbeat ran out (any replica, any host), or it ran on this machine (same boot, same pid namespace) and
// its pid is gone or now names a process started at another time. A task's reservation released this way is reserved
// again by the process that takes the task over (Charge.renew).
import { randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import type { Db } from '../store/db.js';
import { processStartTime } from '../base/pid-file.js';

/** How long a heartbeat lasts unless renewed; it is renewed every third of that. */
export const HEARTBEAT_MS = 30_000;
const PREFIX = 'process:';

/** What another process on this machine needs to tell whether this one still runs. */
export interface ProcessIdentity {
  tag: string;
  pid: number;
  /** Clock ticks since boot when it started (Linux /proc), or null. */
  started: string | null;
  /** The kernel's boot id and the pid namespace: a pid means this process only within both. */
  boot: string | null;
  pidNamespace: string | null;
}

const readOr = (read: () => string): string | null => {
  try {
    return read().trim();
  } catch {
    return null;
  }
};

/** A fresh identity for one gateway process (a tag of 16 hex digits). */
export function newProcessIdentity(): ProcessIdentity {
  return {
    tag: randomBytes(8).toString('hex'),
    pid: process.pid,
    started: processStartTime('self') ?? null,
    boot: readOr(() => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8')),
    pidNamespace: readOr(() => readlinkSync('/proc/self/ns/pid')),
  };
}

/** A reservation id made by the process tagged `tag`. */
export const ownedReservationId = (id: string, tag: string) => `${id}.${tag}`;

/** Writes (or renews) this process's heartbeat. */
export async function beat(db: Db, identity: ProcessIdentity, now = Date.now()): Promise<void> {
  const row = { name: `${PREFIX}${identity.tag}`, owner: JSON.stringify(identity), until: now + HEARTBEAT_MS };
  await db.insertInto('leases').values(row).onConflict((oc) => oc.column('name').doUpdateSet({ until: row.until })).execute();
}

/**
 * Keeps this process's heartbeat until `stop` (which removes it: a process that closed left nothing to release). Removing it
 * is best effort: a row left behind runs out on its own, so a database already gone does not fail the close.
 */
export async function startHeartbeat(db: Db, identity: ProcessIdentity, onError: (err: unknown) => void): Promise<() => Promise<void>> {
  await beat(db, identity);
  const timer = setInterval(() => beat(db, identity).catch(onError), HEARTBEAT_MS / 3);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await db.deleteFrom('leases').where('name', '=', `${PREFIX}${identity.tag}`).execute().catch(onError);
  };
}

/** Whether the process `other` names is gone, as far as this machine can prove (false when it cannot tell). */
function goneFromHere(other: Partial<ProcessIdentity>, here: ProcessIdentity): boolean {
  if (!other.boot || other.boot !== here.boot || !other.pidNamespace || other.pidNamespace !== here.pidNamespace || typeof other.pid !== 'number') return false;
  if (other.pid === here.pid) return other.started !== here.started;
  try {
    process.kill(other.pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
  const started = processStartTime(other.pid);
  return started !== undefined && other.started !== null && started !== other.started;
}

/** Releases the reservations of every process provably gone and forgets its heartbeat; returns how many it released. */
export async function releaseDeadOwners(db: Db, here: ProcessIdentity, now = Date.now()): Promise<number> {
  const beats = await db.selectFrom('leases').selectAll().where('name', 'like', `${PREFIX}%`).execute();
  let released = 0;
  for (const row of beats) {
    const tag = row.name.slice(PREFIX.length);
    if (tag === here.tag || !/^[0-9a-f]{16}$/.test(tag)) continue;
    let other: Partial<ProcessIdentity> = {};
    try {
      other = JSON.parse(row.owner) as Partial<ProcessIdentity>;
    } catch {
      other = {};
    }
    if (row.until > now && !goneFromHere(other, here)) continue;
    released += await db.transaction().execute(async (trx) => {
      // Only while the heartbeat is the one read: a process that beat again meanwhile is alive after all.
      const forgotten = await trx.deleteFrom('leases').where('name', '=', row.name).where('until', '=', row.until).executeTakeFirst();
      if (!Number(forgotten.numDeletedRows)) return 0;
      const dropped = await trx.deleteFrom('spend_reservations').where('id', 'like', `%.${tag}`).executeTakeFirst();
      return Number(dropped.numDeletedRows);
    });
  }
  return released;
}
