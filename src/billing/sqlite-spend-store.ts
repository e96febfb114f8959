// The SpendStore on the embedded SQLite database: each operation is one synchronous IMMEDIATE transaction.
import type BetterSqlite3 from 'better-sqlite3';
import { ChangeCache } from '../store/change-version.js';
import type { LedgerEntry } from '../store/usage-ledger.js';
import { BudgetCalendar, PERIOD_ROWS_KEPT_MS, type BudgetPeriod } from './periods.js';
import type { Balance, CapScope, CapStanding, ReservationRequest, ReserveOutcome, SpendStore } from './spend-store.js';

interface ModelCap {
  scope: CapScope;
  model: string;
  capMicros: number;
  period: BudgetPeriod;
}

interface Caps {
  keyCap: number | null;
  keyPeriod: BudgetPeriod;
  workspaceCap: number | null;
  workspacePeriod: BudgetPeriod;
  /** Caps on single models of the key and its workspace; null when there are none. */
  modelCaps: ModelCap[] | null;
  /** Some cap counts per period or per model, so settlements keep spend_periods. */
  periodic: boolean;
}

/** An uncapped key in an uncapped workspace: admitted, nothing held. Shared, so that answer allocates nothing. */
const notHeld: ReserveOutcome = Object.freeze({ ok: true, held: false });

const ledgerColumns = [
  'request_id', 'workspace_id', 'key_id', 'model', 'channel', 'kind', 'input_tokens', 'output_tokens',
  'cached_input_tokens', 'units', 'cost_micros', 'overage_micros', 'currency', 'price', 'created_at', 'reserved_at', 'reservation_id',
] as const;

/**
 * better-sqlite3 is synchronous, so a transaction cannot interleave with another request of this
 * process; IMMEDIATE takes the write lock up front, so other processes on the same file (WAL,
 * busy_timeout) wait their turn instead of failing to upgrade a read.
 */
/** Most operations one commit takes; a fuller queue commits on the next turn. */
const MAX_BATCH = 512;

export interface SqliteSpendOptions {
  /** Reads the change counter of keys and workspaces; caps are cached while it stands still. */
  changeVersion?: () => number | undefined;
  /** How long a settlement may wait for others to share its commit; 0: the next turn of the event loop. */
  settleBatchMs?: number;
  /** Where budget periods begin (default UTC). */
  calendar?: BudgetCalendar;
}

export function createSqliteSpendStore(sqlite: BetterSqlite3.Database, { changeVersion, settleBatchMs = 0, calendar = new BudgetCalendar() }: SqliteSpendOptions = {}): SpendStore {
  const readSubjectCaps = sqlite.prepare<[string], { keyCap: number | null; keyPeriod: BudgetPeriod; workspaceCap: number | null; workspacePeriod: BudgetPeriod; workspaceId: string }>(
    'select k.spend_cap_micros as keyCap, k.spend_cap_period as keyPeriod, w.spend_cap_micros as workspaceCap, w.spend_cap_period as workspacePeriod, w.id as workspaceId from api_keys k join workspaces w on w.id = k.workspace_id where k.id = ?',
  );
  const readModelCaps = sqlite.prepare<[string, string], ModelCap>(
    "select scope, model, cap_micros as capMicros, period from spend_model_caps where (scope = 'key' and subject_id = ?) or (scope = 'workspace' and subject_id = ?) order by scope, model",
  );
  const readCaps = (keyId: string): Caps | undefined => {
    const row = readSubjectCaps.get(keyId);
    if (!row) return undefined;
    const models = readModelCaps.all(keyId, row.workspaceId);
    const modelCaps = models.length ? models : null;
    const periodic = modelCaps !== null || (row.keyCap !== null && row.keyPeriod !== 'total') || (row.workspaceCap !== null && row.workspacePeriod !== 'total');
    return { keyCap: row.keyCap, keyPeriod: row.keyPeriod, workspaceCap: row.workspaceCap, workspacePeriod: row.workspacePeriod, modelCaps, periodic };
  };
  // Caps by key, kept while the change counter of keys and workspaces stands still (a cap change bumps it).
  const capsCache = new ChangeCache<Caps | undefined>();
  const capsOf = (keyId: string): Caps | undefined => {
    const version = changeVersion?.();
    if (version === undefined) return readCaps(keyId);
    const caps = capsCache.at(version);
    if (!caps.has(keyId)) caps.set(keyId, readCaps(keyId));
    return caps.get(keyId);
  };
  const uncapped = (caps: Caps | undefined) => caps === undefined || (caps.keyCap === null && caps.workspaceCap === null && caps.modelCaps === null);
  const spentOf = sqlite.prepare<[string, string], number>('select spent_micros from spend_totals where scope = ? and subject_id = ?').pluck();
  const reservedBy = {
    key: sqlite.prepare<[string, number], number>('select coalesce(sum(amount_micros), 0) from spend_reservations where key_id = ? and expires_at > ?').pluck(),
    workspace: sqlite.prepare<[string, number], number>('select coalesce(sum(amount_micros), 0) from spend_reservations where workspace_id = ? and expires_at > ?').pluck(),
  };
  type PeriodQuery = { id: string; model: string; start: number; now: number };
  const reservedInPeriod = {
    key: sqlite.prepare<[PeriodQuery], number>("select coalesce(sum(amount_micros), 0) from spend_reservations where key_id = @id and expires_at > @now and created_at >= @start and (@model = '' or model = @model)").pluck(),
    workspace: sqlite.prepare<[PeriodQuery], number>("select coalesce(sum(amount_micros), 0) from spend_reservations where workspace_id = @id and expires_at > @now and created_at >= @start and (@model = '' or model = @model)").pluck(),
  };
  // A period's spend starts from the ledger rows reserved in it: a budget set mid-period counts what the period already spent.
  // A row settles no earlier than it was reserved, so `created_at` (seconds, an hour of clock skew between replicas
  // allowed) bounds the index range.
  const ledgerSince = {
    key: sqlite.prepare<[Omit<PeriodQuery, 'now'>], number>("select coalesce(sum(cost_micros), 0) from usage_ledger where key_id = @id and (@model = '' or model = @model) and created_at >= @start / 1000 - 3600 and coalesce(reserved_at, created_at * 1000) >= @start").pluck(),
    workspace: sqlite.prepare<[Omit<PeriodQuery, 'now'>], number>("select coalesce(sum(cost_micros), 0) from usage_ledger where workspace_id = @id and (@model = '' or model = @model) and created_at >= @start / 1000 - 3600 and coalesce(reserved_at, created_at * 1000) >= @start").pluck(),
  };
  const periodSpentOf = sqlite.prepare<[CapScope, string, string, BudgetPeriod, number], number>(
    'select spent_micros from spend_periods where scope = ? and subject_id = ? and model = ? and period = ? and period_start = ?',
  ).pluck();
  const insertPeriod = sqlite.prepare<[CapScope, string, string, BudgetPeriod, number, number]>(
    'insert into spend_periods (scope, subject_id, model, period, period_start, spent_micros) values (?, ?, ?, ?, ?, ?) on conflict do nothing',
  );
  // The periods a settled cost counts in: the day, week and month of its reservation, on all models and on its own.
  const addToPeriods = sqlite.prepare<[number, CapScope, string, string, number, number, number]>(
    `update spend_periods set spent_micros = spent_micros + ? where scope = ? and subject_id = ? and model in ('', ?)
       and ((period = 'total' and period_start = 0) or (period = 'daily' and period_start = ?) or (period = 'weekly' and period_start = ?) or (period = 'monthly' and period_start = ?))`,
  );
  const insertReservation = sqlite.prepare(
    'insert into spend_reservations (id, key_id, workspace_id, request_id, amount_micros, expires_at, created_at, model) values (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const deleteReservation = sqlite.prepare<[string]>('delete from spend_reservations where id = ?');
  const insertLedger = sqlite.prepare(
    `insert into usage_ledger (${ledgerColumns.join(', ')}) values (${ledgerColumns.map(() => '?').join(', ')}) on conflict do nothing`,
  );
  const extendReservation = sqlite.prepare<[number, string, number]>('update spend_reservations set expires_at = max(expires_at, ?) where id = ? and expires_at > ?');
  const deleteExpired = sqlite.prepare<[number]>('delete from spend_reservations where expires_at <= ?');
  const deleteEndedPeriods = sqlite.prepare<[number]>("delete from spend_periods where period <> 'total' and period_start < ?");
  const addSpent = sqlite.prepare<[string, string, number]>(
    'insert into spend_totals (scope, subject_id, spent_micros) values (?, ?, ?) on conflict (scope, subject_id) do update set spent_micros = spent_micros + excluded.spent_micros',
  );
  /** Costs charged in the open batch, per `scope:id`, written to spend_totals once before it commits. */
  const spentInBatch = new Map<string, { scope: CapScope; id: string; micros: number }>();
  const addToBatch = (scope: CapScope, id: string, micros: number) => {
    const key = `${scope}:${id}`;
    const entry = spentInBatch.get(key);
    if (entry) entry.micros += micros;
    else spentInBatch.set(key, { scope, id, micros });
  };
  /** Spend totals are the ledger summed; inside a batch they include what the batch charged so far. */
  const spentNow = (scope: CapScope, id: string) => (spentOf.get(scope, id) ?? 0) + (spentInBatch.get(`${scope}:${id}`)?.micros ?? 0);

  const balanceOf = (scope: CapScope, id: string, now: number): Balance => ({
    spentMicros: spentNow(scope, id),
    reservedMicros: reservedBy[scope].get(id, now) ?? 0,
  });

  /** Spent in one period of a budget on one model or all: its spend_periods row, started from the ledger when missing. */
  const periodSpent = (scope: CapScope, id: string, model: string, period: BudgetPeriod, start: number): number => {
    const kept = periodSpentOf.get(scope, id, model, period, start);
    if (kept !== undefined) return kept;
    const spent = ledgerSince[scope].get({ id, model, start }) ?? 0;
    insertPeriod.run(scope, id, model, period, start, spent);
    return spent;
  };

  /** Where a budget stands if it refuses `amount`; undefined when it admits it. */
  const standing = (scope: CapScope, id: string, model: string, period: BudgetPeriod, cap: number, r: ReservationRequest): CapStanding | undefined => {
    let spentMicros: number;
    let reservedMicros: number;
    if (period === 'total' && model === '') {
      spentMicros = spentNow(scope, id);
      reservedMicros = reservedBy[scope].get(id, r.now) ?? 0;
    } else {
      const start = calendar.start(period, r.now);
      spentMicros = periodSpent(scope, id, model, period, start);
      reservedMicros = reservedInPeriod[scope].get({ id, model, start, now: r.now }) ?? 0;
    }
    if (spentMicros + reservedMicros + r.amountMicros <= cap) return undefined;
    return { scope, id, model: model || null, period, capMicros: cap, spentMicros, reservedMicros, resetsAt: calendar.resetsAt(period, r.now) };
  };

  const modelStanding = (caps: Caps, scope: CapScope, id: string, r: ReservationRequest): CapStanding | undefined => {
    if (!caps.modelCaps || !r.model) return undefined;
    for (const cap of caps.modelCaps) {
      if (cap.scope === scope && cap.model === r.model) return standing(scope, id, cap.model, cap.period, cap.capMicros, r);
    }
    return undefined;
  };

  const reserveOne = (r: ReservationRequest): ReserveOutcome => {
    const caps = capsOf(r.keyId);
    // Nothing to hold against: an uncapped key in an uncapped workspace is admitted without a reservation row.
    if (uncapped(caps)) return notHeld;
    const { keyCap, keyPeriod, workspaceCap, workspacePeriod } = caps!;
    const refusedBy =
      (keyCap === null ? undefined : standing('key', r.keyId, '', keyPeriod, keyCap, r)) ??
      modelStanding(caps!, 'key', r.keyId, r) ??
      (workspaceCap === null ? undefined : standing('workspace', r.workspaceId, '', workspacePeriod, workspaceCap, r)) ??
      modelStanding(caps!, 'workspace', r.workspaceId, r);
    if (refusedBy) return { ok: false, refusedBy };
    insertReservation.run(r.id, r.keyId, r.workspaceId, r.requestId, r.amountMicros, r.expiresAt, r.now, r.model ?? '');
    return { ok: true, held: true };
  };

  const settleOne = (reservationId: string, entry: LedgerEntry, held: boolean): boolean => {
    if (held) deleteReservation.run(reservationId);
    const reservedAt = Number(entry.reserved_at ?? Number(entry.created_at) * 1000);
    // reserved_at and reservation_id are the last columns; the others come from the entry.
    const values: unknown[] = new Array(ledgerColumns.length);
    for (let i = 0; i < ledgerColumns.length - 2; i++) values[i] = entry[ledgerColumns[i] as Exclude<(typeof ledgerColumns)[number], 'reservation_id'>] ?? 0;
    values[ledgerColumns.length - 2] = reservedAt;
    values[ledgerColumns.length - 1] = reservationId;
    if (insertLedger.run(values).changes === 0) return false;
    const cost = Number(entry.cost_micros ?? 0);
    if (cost > 0) {
      addToBatch('key', String(entry.key_id), cost);
      addToBatch('workspace', String(entry.workspace_id), cost);
      // Only keys under a periodic or per-model cap keep period rows; others skip the statement.
      if (capsOf(String(entry.key_id))?.periodic) {
        const starts = calendar.starts(reservedAt);
        const model = String(entry.model);
        addToPeriods.run(cost, 'key', String(entry.key_id), model, starts.daily, starts.weekly, starts.monthly);
        addToPeriods.run(cost, 'workspace', String(entry.workspace_id), model, starts.daily, starts.weekly, starts.monthly);
      }
    }
    return true;
  };

  // Group commit. Reserves queued during one turn of the event loop run in one IMMEDIATE transaction, one after
  // another, so each check sees every hold before it (exact under concurrency). Settlements wait up to
  // `settleBatchMs` for company (a commit costs several times a row), or ride along with the next reserve batch;
  // until their commit lands their reservations keep holding the budget, so a cap is never passed meanwhile.
  type Pending = { run: () => unknown; resolve: (value: never) => void; reject: (err: unknown) => void };
  let queue: Pending[] = [];
  let turnScheduled = false;
  let timer: NodeJS.Timeout | undefined;
  const runBatch = sqlite.transaction((batch: Pending[]) => {
    spentInBatch.clear();
    const results = batch.map((op) => {
      try {
        return { ok: true as const, value: op.run() };
      } catch (error) {
        return { ok: false as const, error };
      }
    });
    // One upsert per key and workspace charged in this batch, committed with the ledger rows.
    for (const { scope, id, micros } of spentInBatch.values()) addSpent.run(scope, id, micros);
    spentInBatch.clear();
    return results;
  });
  const commitQueued = () => {
    if (queue.length === 0) return;
    // Inside an open transaction of someone else's, the batch would commit or roll back with it: try again next turn.
    if (sqlite.inTransaction) return commitThisTurn();
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batch = queue;
    queue = [];
    try {
      runBatch.immediate(batch).forEach((result, i) => (result.ok ? batch[i].resolve(result.value as never) : batch[i].reject(result.error)));
    } catch (error) {
      for (const op of batch) op.reject(error);
    }
  };
  const onTurn = () => {
    turnScheduled = false;
    commitQueued();
  };
  const commitThisTurn = () => {
    if (turnScheduled) return;
    turnScheduled = true;
    setImmediate(onTurn);
  };
  const enqueue = <T>(run: () => T, soon: boolean): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      queue.push({ run, resolve: resolve as (value: never) => void, reject });
      if (soon || settleBatchMs === 0 || queue.length >= MAX_BATCH) commitThisTurn();
      else timer ??= setTimeout(commitQueued, settleBatchMs).unref();
    });

  return {
    // Uncapped key in an uncapped workspace: nothing to hold, so no transaction and no wait for a batch.
    reserve: (request) => {
      if (uncapped(capsOf(request.keyId))) return Promise.resolve(notHeld);
      return enqueue(() => reserveOne(request), true);
    },
    settle: (reservationId, entry, held = true) => enqueue(() => settleOne(reservationId, entry, held), false),
    commitsInBatches: true,
    commitQueued,
    release: async (reservationId) => void deleteReservation.run(reservationId),
    renew: async (reservationId, expiresAt, now) => extendReservation.run(expiresAt, reservationId, now).changes > 0,
    sweep: async (now) => {
      deleteEndedPeriods.run(now - PERIOD_ROWS_KEPT_MS);
      return deleteExpired.run(now).changes;
    },
    balance: async (scope, id, now) => {
      commitQueued();
      return balanceOf(scope, id, now);
    },
  };
}
