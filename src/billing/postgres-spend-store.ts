// The SpendStore on PostgreSQL, shared by every replica: a reserve and a settle of one key or workspace never interleave.
import { sql } from 'kysely';
import type { Db } from '../store/database.js';
import type { LedgerEntry } from '../store/usage-ledger.js';
import { BudgetCalendar, PERIOD_ROWS_KEPT_MS, type BudgetPeriod } from '../config/periods.js';
import type { Balance, CapScope, CapStanding, ReservationRequest, ReserveOutcome, SpendStore } from './spend-store.js';
import { PostgresSettleBatcher } from './postgres-settle-batch.js';

const notHeld: ReserveOutcome = Object.freeze({ ok: true, held: false });
const held: ReserveOutcome = Object.freeze({ ok: true, held: true });

type AdmitRow = { ok: boolean; held: boolean; scope: CapScope | null; model: string | null; period: BudgetPeriod | null; cap: number | null; spent: number | null; reserved: number | null };

/** Where the refusing budget stood, from spend_admit's row. */
function standingOf(outcome: AdmitRow, r: ReservationRequest, calendar: BudgetCalendar): CapStanding {
  const scope = outcome.scope!;
  const period = outcome.period!;
  return {
    scope,
    id: scope === 'key' ? r.keyId : r.workspaceId,
    model: outcome.model || null,
    period,
    capMicros: Number(outcome.cap),
    spentMicros: Number(outcome.spent),
    reservedMicros: Number(outcome.reserved),
    resetsAt: calendar.resetsAt(period, r.now),
  };
}

/**
 * Caps hold across replicas because every reserve and settle runs as one server-side function (migration 007) that
 * first takes transaction-scoped advisory locks, key then workspace, and only then reads spent and reserved: under
 * READ COMMITTED each statement after the locks sees what the previous holder committed, so no two checks can pass on
 * the same budget. (A conditional UPDATE of one counter row cannot express it: reservations expire on their own, so
 * what is held is a sum over live rows, not a stored number.) One round trip a reservation (migration 017 checks for
 * caps in the same call); settlements go in batches, one statement for all that arrive while the last batch is out.
 * Budget periods come in as the starts of the reservation's day, week and month (migration 015), computed here in the
 * operator's time zone.
 */
export function createPostgresSpendStore(db: Db, calendar = new BudgetCalendar()): SpendStore {
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

  const settlements = new PostgresSettleBatcher(db, calendar);
  return {
    commitsInBatches: false,
    // One round trip: spend_admit checks for caps and reserves (migration 017).
    async reserve(r: ReservationRequest): Promise<ReserveOutcome> {
      const starts = calendar.starts(r.now);
      const { rows } = await sql<AdmitRow>`
        select * from spend_admit(${r.id}, ${r.keyId}, ${r.workspaceId}, ${r.requestId}, ${r.model ?? ''}, ${r.amountMicros}, ${r.now}, ${r.expiresAt}, ${starts.daily}, ${starts.weekly}, ${starts.monthly})`.execute(db);
      const [outcome] = rows;
      if (outcome.ok) return outcome.held ? held : notHeld;
      return { ok: false, refusedBy: standingOf(outcome, r, calendar) };
    },

    // Batched with the settlements arriving meanwhile; idempotent by reservation id.
    settle: (reservationId: string, entry: LedgerEntry) => settlements.settle(reservationId, entry),
    commitQueued: () => settlements.drain(),
    appendLogs: (rows) => settlements.appendLogs(rows),

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
