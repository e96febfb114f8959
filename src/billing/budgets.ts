// What a key or a workspace has spent in a budget period, read from the ledger: for the dashboard, the CLI and the admin API.
import { sql } from 'kysely';
import type { Db } from '../store/database.js';
import type { BudgetCalendar, BudgetPeriod } from './periods.js';

export interface PeriodSpend {
  period: BudgetPeriod;
  /** Unix milliseconds; 0 for `total`. */
  periodStart: number;
  /** Unix milliseconds when the period ends; null for `total`. */
  resetsAt: number | null;
  spentMicros: number;
}

export interface PeriodQuery {
  period: BudgetPeriod;
  /** Only this model's spend; all models when absent. */
  model?: string;
  /** The instant whose period is meant (default now). */
  at?: number;
}

/**
 * Spend of a key or a workspace in the period `at` falls in, counting each charge in the period of its reservation
 * (as the caps do). Charges this process has queued but not committed are committed before the read.
 */
export async function spendInPeriod(db: Db, calendar: BudgetCalendar, scope: 'key' | 'workspace', id: string, { period, model, at = Date.now() }: PeriodQuery): Promise<PeriodSpend> {
  const periodStart = calendar.start(period, at);
  const resetsAt = calendar.resetsAt(period, at);
  let query = db
    .selectFrom('usage_ledger')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('cost_micros'), eb.lit(0)).as('spent'))
    .where(scope === 'key' ? 'key_id' : 'workspace_id', '=', id);
  if (model !== undefined) query = query.where('model', '=', model);
  if (period !== 'total') {
    const reservedAt = sql<number>`coalesce(reserved_at, created_at * 1000)`;
    // A row settles no earlier than it was reserved: created_at (seconds, an hour of clock skew allowed) narrows the index range.
    query = query.where('created_at', '>=', Math.floor(periodStart / 1000) - 3600).where(reservedAt, '>=', periodStart).where(reservedAt, '<', resetsAt!);
  }
  const row = await query.executeTakeFirstOrThrow();
  return { period, periodStart, resetsAt, spentMicros: Number(row.spent) };
}
