// What a key or a workspace has spent in a budget period, read from the ledger: for the dashboard, the CLI and the admin API.
import { sql } from 'kysely';
import type { Db } from '../store/database.js';
import type { BudgetCalendar, BudgetPeriod } from '../config/periods.js';

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

/** A key or a workspace with its cap on all models, as stored. */
export interface CappedSubject {
  id: string;
  spend_cap_micros: number | null;
  spend_cap_period: BudgetPeriod;
}

/** Spend in the current period, and all time. */
export type SubjectSpend = PeriodSpend & { lifetimeMicros: number };

/** The period a subject's spend is shown over: its cap's, or `total` (all time) when it has no cap. */
export const shownPeriod = (subject: CappedSubject): BudgetPeriod => (subject.spend_cap_micros === null ? 'total' : subject.spend_cap_period);

/**
 * What each key or workspace spent in the current period of its cap, as the cap counts it (all time, from the running
 * totals, for a `total` cap or none): for the dashboard's keys page and the admin API's views alike.
 */
export async function spendOfSubjects(db: Db, calendar: BudgetCalendar, scope: 'key' | 'workspace', subjects: readonly CappedSubject[], at = Date.now()): Promise<Map<string, SubjectSpend>> {
  const spends = new Map<string, SubjectSpend>();
  if (!subjects.length) return spends;
  const totals = await db.selectFrom('spend_totals').select(['subject_id', 'spent_micros']).where('scope', '=', scope).where('subject_id', 'in', subjects.map((s) => s.id)).execute();
  const lifetime = new Map(totals.map((r) => [r.subject_id, Number(r.spent_micros)]));
  for (const subject of subjects) {
    const period = shownPeriod(subject);
    const lifetimeMicros = lifetime.get(subject.id) ?? 0;
    const spend = period === 'total' ? { period, periodStart: 0, resetsAt: null, spentMicros: lifetimeMicros } : await spendInPeriod(db, calendar, scope, subject.id, { period, at });
    spends.set(subject.id, { ...spend, lifetimeMicros });
  }
  return spends;
}
