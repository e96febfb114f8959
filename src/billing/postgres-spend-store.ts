// The SpendStore on PostgreSQL, shared by every replica: a reserve and a settle of one key or workspace never interleave.
import { sql } from 'kysely';
import type { Db } from '../store/database.js';
import type { LedgerEntry } from '../store/usage-ledger.js';
import { BudgetCalendar, PERIOD_ROWS_KEPT_MS, type BudgetPeriod } from './periods.js';
import type { Balance, CapScope, ReservationRequest, ReserveOutcome, SpendStore } from './spend-store.js';

const notHeld: ReserveOutcome = Object.freeze({ ok: true, held: false });

/**
 * Caps hold across replicas because every reserve and settle runs as one server-side function (migration 007) that
 * first takes transaction-scoped advisory locks, key then workspace, and only then reads spent and reserved: under
 * READ COMMITTED each statement after the locks sees what the previous holder committed, so no two checks can pass on
 * the same budget. One round trip each. (A conditional UPDATE of one counter row cannot express it: reservations
 * expire on their own, so what is held is a sum over live rows, not a stored number.) Budget periods come in as the
 * starts of the reservation's day, week and month (migration 015), computed here in the operator's time zone.
 */
export function createPostgresSpendStore(db: Db, calendar = new BudgetCalendar()): SpendStore {
  const capsOf = (keyId: string) =>
    db
      .selectFrom('api_keys as k')
      .innerJoin('workspaces as w', 'w.id', 'k.workspace_id')
      .select((eb) => [
        'k.spend_cap_micros as keyCap',
        'w.spend_cap_micros as workspaceCap',
        eb.exists(eb.selectFrom('spend_model_caps as c').select('c.model').where((c) => c.or([c.and([c('c.scope', '=', 'key'), c('c.subject_id', '=', c.ref('k.id'))]), c.and([c('c.scope', '=', 'workspace'), c('c.subject_id', '=', c.ref('w.id'))])]))).as('modelCaps'),
      ])
      .where('k.id', '=', keyId)
      .executeTakeFirst();

  const balanceOf = async (scope: CapScope, id: string, now: number): Promise<Balance> => {
    const spent = await db.selectFrom('spend_totals').select('spent_micros').where('scope', '=', scope).where('subject_id', '=', id).executeTakeFirst();
    const reserved = await db
      .selectFrom('spend_reservations')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amount_micros'), sql<number>`0`).as('sum'))
      .where(scope === 'key' ? 'key_id' : 'workspace_id', '=', id)
      .where('expires_at', '>', now)
      .executeTakeFirstOrThrow();
    return { spentMicros: Number(spent?.spent_micros ?? 0), reservedMicros: Number(reserved.sum) };
  };

  return {
    commitsInBatches: false,
    async reserve(r: ReservationRequest): Promise<ReserveOutcome> {
      const caps = await capsOf(r.keyId);
      // Nothing to hold against: an uncapped key in an uncapped workspace is admitted without a reservation row.
      if (!caps || (caps.keyCap === null && caps.workspaceCap === null && !caps.modelCaps)) return notHeld;
      const starts = calendar.starts(r.now);
      const { rows } = await sql<{ ok: boolean; scope: CapScope | null; model: string | null; period: BudgetPeriod | null; cap: number | null; spent: number | null; reserved: number | null }>`
        select * from spend_reserve(${r.id}, ${r.keyId}, ${r.workspaceId}, ${r.requestId}, ${r.model ?? ''}, ${r.amountMicros}, ${r.now}, ${r.expiresAt}, ${starts.daily}, ${starts.weekly}, ${starts.monthly})`.execute(db);
      const [outcome] = rows;
      if (outcome.ok) return { ok: true, held: true };
      const scope = outcome.scope!;
      const period = outcome.period!;
      return {
        ok: false,
        refusedBy: {
          scope,
          id: scope === 'key' ? r.keyId : r.workspaceId,
          model: outcome.model || null,
          period,
          capMicros: Number(outcome.cap),
          spentMicros: Number(outcome.spent),
          reservedMicros: Number(outcome.reserved),
          resetsAt: calendar.resetsAt(period, r.now),
        },
      };
    },

    // Idempotent by reservation id: a second settle of the same charge, from any replica, inserts nothing.
    settle: async (reservationId: string, entry: LedgerEntry) => {
      const reservedAt = Number(entry.reserved_at ?? Number(entry.created_at) * 1000);
      const starts = calendar.starts(reservedAt);
      const { rows } = await sql<{ settled: boolean }>`
        select spend_settle(${reservationId}, ${JSON.stringify({ overage_micros: 0, ...entry, reserved_at: reservedAt })}::jsonb, ${starts.daily}, ${starts.weekly}, ${starts.monthly}) as settled`.execute(db);
      return rows[0].settled;
    },

    renew: async (reservationId, expiresAt, now) =>
      Number(
        (await db.updateTable('spend_reservations').set({ expires_at: sql`greatest(expires_at, ${expiresAt})` }).where('id', '=', reservationId).where('expires_at', '>', now).executeTakeFirst()).numUpdatedRows,
      ) > 0,
    release: async (reservationId) => void (await db.deleteFrom('spend_reservations').where('id', '=', reservationId).execute()),
    sweep: async (now) => {
      await db.deleteFrom('spend_periods').where('period', '<>', 'total').where('period_start', '<', now - PERIOD_ROWS_KEPT_MS).execute();
      return Number((await db.deleteFrom('spend_reservations').where('expires_at', '<=', now).executeTakeFirst()).numDeletedRows);
    },
    balance: (scope, id, now) => balanceOf(scope, id, now),
  };
}
