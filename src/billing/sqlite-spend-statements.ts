// The prepared statements of the embedded spend store: caps, spent and reserved sums, period rows, reservations, ledger.
import type BetterSqlite3 from 'better-sqlite3';
import type { BudgetPeriod } from '../config/periods.js';
import type { CapScope } from './spend-store.js';
import { requestLogColumns } from '../store/request-log-table.js';

export interface ModelCap {
  scope: CapScope;
  model: string;
  capMicros: number;
  period: BudgetPeriod;
}

export interface SubjectCaps {
  keyCap: number | null;
  keyPeriod: BudgetPeriod;
  workspaceCap: number | null;
  workspacePeriod: BudgetPeriod;
  workspaceId: string;
}

type PeriodQuery = { id: string; model: string; start: number; now: number };
type LedgerQuery = Omit<PeriodQuery, 'now'>;

export const ledgerColumns = [
  'request_id', 'workspace_id', 'key_id', 'model', 'channel', 'kind', 'input_tokens', 'output_tokens',
  'cached_input_tokens', 'units', 'cost_micros', 'overage_micros', 'currency', 'price', 'created_at', 'reserved_at', 'reservation_id',
] as const;

/** What caps a key stands under: its own and its workspace's, and those on single models. */
export function capStatements(sqlite: BetterSqlite3.Database) {
  return {
    subjectCaps: sqlite.prepare<[string], SubjectCaps>(
      'select k.spend_cap_micros as keyCap, k.spend_cap_period as keyPeriod, w.spend_cap_micros as workspaceCap, w.spend_cap_period as workspacePeriod, w.id as workspaceId from api_keys k join workspaces w on w.id = k.workspace_id where k.id = ?',
    ),
    modelCaps: sqlite.prepare<[string, string], ModelCap>(
      "select scope, model, cap_micros as capMicros, period from spend_model_caps where (scope = 'key' and subject_id = ?) or (scope = 'workspace' and subject_id = ?) order by scope, model",
    ),
    changeVersion: sqlite.prepare<[], number>("select version from change_counters where name = 'auth'").pluck(),
  };
}

/** How much a key or workspace has spent and holds, in all time or in one period. */
export function standingStatements(sqlite: BetterSqlite3.Database) {
  const reservedSince = (column: string) =>
    sqlite.prepare<[PeriodQuery], number>(`select coalesce(sum(amount_micros), 0) from spend_reservations where ${column} = @id and expires_at > @now and created_at >= @start and (@model = '' or model = @model)`).pluck();
  // A period's spend starts from the ledger rows reserved in it: a budget set mid-period counts what the period already
  // spent. A row settles no earlier than it was reserved, so `created_at` (seconds, an hour of clock skew between
  // replicas allowed) bounds the index range.
  const ledgerSince = (column: string) =>
    sqlite.prepare<[LedgerQuery], number>(`select coalesce(sum(cost_micros), 0) from usage_ledger where ${column} = @id and (@model = '' or model = @model) and created_at >= @start / 1000 - 3600 and coalesce(reserved_at, created_at * 1000) >= @start`).pluck();
  return {
    spentOf: sqlite.prepare<[string, string], number>('select spent_micros from spend_totals where scope = ? and subject_id = ?').pluck(),
    reservedBy: {
      key: sqlite.prepare<[string, number], number>('select coalesce(sum(amount_micros), 0) from spend_reservations where key_id = ? and expires_at > ?').pluck(),
      workspace: sqlite.prepare<[string, number], number>('select coalesce(sum(amount_micros), 0) from spend_reservations where workspace_id = ? and expires_at > ?').pluck(),
    },
    reservedInPeriod: { key: reservedSince('key_id'), workspace: reservedSince('workspace_id') },
    ledgerSince: { key: ledgerSince('key_id'), workspace: ledgerSince('workspace_id') },
    periodSpentOf: sqlite.prepare<[CapScope, string, string, BudgetPeriod, number], number>(
      'select spent_micros from spend_periods where scope = ? and subject_id = ? and model = ? and period = ? and period_start = ?',
    ).pluck(),
    insertPeriod: sqlite.prepare<[CapScope, string, string, BudgetPeriod, number, number]>(
      'insert into spend_periods (scope, subject_id, model, period, period_start, spent_micros) values (?, ?, ?, ?, ?, ?) on conflict do nothing',
    ),
  };
}

/** What reserving, settling, renewing and sweeping write. */
export function writeStatements(sqlite: BetterSqlite3.Database) {
  return {
    insertReservation: sqlite.prepare<[string, string, string, string, number, number, number, string]>(
      'insert into spend_reservations (id, key_id, workspace_id, request_id, amount_micros, expires_at, created_at, model) values (?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    deleteReservation: sqlite.prepare<[string]>('delete from spend_reservations where id = ?'),
    insertLedger: sqlite.prepare<unknown[]>(`insert into usage_ledger (${ledgerColumns.join(', ')}) values (${ledgerColumns.map(() => '?').join(', ')}) on conflict do nothing`),
    // The periods a settled cost counts in: the day, week and month of its reservation, on all models and on its own.
    addToPeriods: sqlite.prepare<[number, CapScope, string, string, number, number, number]>(
      `update spend_periods set spent_micros = spent_micros + ? where scope = ? and subject_id = ? and model in ('', ?)
         and ((period = 'total' and period_start = 0) or (period = 'daily' and period_start = ?) or (period = 'weekly' and period_start = ?) or (period = 'monthly' and period_start = ?))`,
    ),
    addSpent: sqlite.prepare<[string, string, number]>(
      'insert into spend_totals (scope, subject_id, spent_micros) values (?, ?, ?) on conflict (scope, subject_id) do update set spent_micros = spent_micros + excluded.spent_micros',
    ),
    extendReservation: sqlite.prepare<[number, string, number]>('update spend_reservations set expires_at = max(expires_at, ?) where id = ? and expires_at > ?'),
    deleteExpired: sqlite.prepare<[number]>('delete from spend_reservations where expires_at <= ?'),
    deleteEndedPeriods: sqlite.prepare<[number]>("delete from spend_periods where period <> 'total' and period_start < ?"),
    insertRequestLog: sqlite.prepare<unknown[]>(`insert into request_logs (${requestLogColumns.join(', ')}) values (${requestLogColumns.map(() => '?').join(', ')}) on conflict do nothing`),
    countRequestLogs: sqlite.prepare<[string, number]>(
      'insert into request_log_counts (workspace_id, row_count) values (?, ?) on conflict (workspace_id) do update set row_count = row_count + excluded.row_count',
    ),
  };
}
