// The SpendStore on PostgreSQL, shared by every replica: a reserve and a settle of one key or workspace never interleave.
import { sql, type Transaction } from 'kysely';
import type { Db } from '../store/database.js';
import type { Database } from '../store/schema.js';
import type { LedgerEntry } from '../store/usage-ledger.js';
import type { Balance, CapScope, CapStanding, ReservationRequest, ReserveOutcome, SpendStore } from './spend-store.js';

type Tx = Transaction<Database>;

/**
 * Caps hold across replicas by transaction-scoped advisory locks, taken key first and workspace second by every
 * reserve and settle: under READ COMMITTED each then reads spent and reserved after the previous holder committed,
 * so no two checks can both pass on the same budget. (A conditional UPDATE on one counter row cannot express it:
 * reservations expire on their own, so what is held is a sum over live rows, not a stored number.)
 */
export function createPostgresSpendStore(db: Db): SpendStore {
  const lock = async (trx: Tx, keyId: string, workspaceId: string) => {
    await sql`select pg_advisory_xact_lock(hashtextextended(${`spend:key:${keyId}`}, 0))`.execute(trx);
    await sql`select pg_advisory_xact_lock(hashtextextended(${`spend:workspace:${workspaceId}`}, 0))`.execute(trx);
  };
  const capsOf = (q: Db | Tx, keyId: string) =>
    q.selectFrom('api_keys as k').innerJoin('workspaces as w', 'w.id', 'k.workspace_id').select(['k.spend_cap_micros as keyCap', 'w.spend_cap_micros as workspaceCap']).where('k.id', '=', keyId).executeTakeFirst();

  const balanceOf = async (q: Db | Tx, scope: CapScope, id: string, now: number): Promise<Balance> => {
    const spent = await q.selectFrom('spend_totals').select('spent_micros').where('scope', '=', scope).where('subject_id', '=', id).executeTakeFirst();
    const reserved = await q
      .selectFrom('spend_reservations')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amount_micros'), sql<number>`0`).as('sum'))
      .where(scope === 'key' ? 'key_id' : 'workspace_id', '=', id)
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow();
    return { spentMicros: Number(spent?.spent_micros ?? 0), reservedMicros: Number(reserved.sum) };
  };

  const standing = async (trx: Tx, scope: CapScope, id: string, cap: number | null, amount: number, now: number): Promise<CapStanding | undefined> => {
    if (cap === null) return undefined;
    const { spentMicros, reservedMicros } = await balanceOf(trx, scope, id, now);
    return spentMicros + reservedMicros + amount > cap ? { scope, id, capMicros: cap, spentMicros, reservedMicros } : undefined;
  };

  const addSpent = (trx: Tx, scope: CapScope, id: string, micros: number) =>
    trx
      .insertInto('spend_totals')
      .values({ scope, subject_id: id, spent_micros: micros })
      .onConflict((oc) => oc.columns(['scope', 'subject_id']).doUpdateSet({ spent_micros: sql`spend_totals.spent_micros + excluded.spent_micros` }))
      .execute();

  return {
    async reserve(r: ReservationRequest): Promise<ReserveOutcome> {
      const caps = await capsOf(db, r.keyId);
      // Nothing to hold against: an uncapped key in an uncapped workspace is admitted without a reservation row.
      if ((caps?.keyCap ?? null) === null && (caps?.workspaceCap ?? null) === null) return { ok: true };
      return db.transaction().execute(async (trx) => {
        await lock(trx, r.keyId, r.workspaceId);
        const fresh = await capsOf(trx, r.keyId);
        const refusedBy =
          (await standing(trx, 'key', r.keyId, fresh?.keyCap ?? null, r.amountMicros, r.now)) ??
          (await standing(trx, 'workspace', r.workspaceId, fresh?.workspaceCap ?? null, r.amountMicros, r.now));
        if (refusedBy) return { ok: false, refusedBy };
        await trx
          .insertInto('spend_reservations')
          .values({ id: r.id, key_id: r.keyId, workspace_id: r.workspaceId, request_id: r.requestId, amount_micros: r.amountMicros, expires_at: r.expiresAt, created_at: r.now })
          .execute();
        return { ok: true };
      });
    },

    settle: (reservationId: string, entry: LedgerEntry) =>
      db.transaction().execute(async (trx) => {
        await lock(trx, String(entry.key_id), String(entry.workspace_id));
        await trx.deleteFrom('spend_reservations').where('id', '=', reservationId).execute();
        // Idempotent by reservation id: a second settle of the same charge, from any replica, inserts nothing.
        const inserted = await trx
          .insertInto('usage_ledger')
          .values({ ...entry, reservation_id: reservationId })
          .onConflict((oc) => oc.column('reservation_id').where('reservation_id', 'is not', null).doNothing())
          .returning('id')
          .executeTakeFirst();
        if (!inserted) return false;
        const cost = Number(entry.cost_micros ?? 0);
        if (cost > 0) {
          await addSpent(trx, 'key', String(entry.key_id), cost);
          await addSpent(trx, 'workspace', String(entry.workspace_id), cost);
        }
        return true;
      }),

    release: async (reservationId) => void (await db.deleteFrom('spend_reservations').where('id', '=', reservationId).execute()),
    sweep: async (now) => Number((await db.deleteFrom('spend_reservations').where('expires_at', '<=', now).executeTakeFirst()).numDeletedRows),
    balance: (scope, id, now) => balanceOf(db, scope, id, now),
  };
}
