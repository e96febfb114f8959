// The embedded spend store's work, synchronous: a batch of reserves, settlements, releases and renewals in one
// IMMEDIATE transaction. It runs on the event loop (createSqliteSpendStore) or on a thread of its own (spend-thread.ts).
import type BetterSqlite3 from 'better-sqlite3';
import type { LedgerEntry } from '../store/usage-ledger.js';
import { BudgetCalendar, PERIOD_ROWS_KEPT_MS, type BudgetPeriod } from '../config/periods.js';
import type { Balance, CapScope, CapStanding, ReservationRequest, ReserveOutcome } from './spend-store.js';
import { uncapped, type Caps, type CapsReader } from './sqlite-spend-caps.js';
import { ledgerColumns, standingStatements, writeStatements } from './sqlite-spend-statements.js';
import { WORKSPACE_COLUMN, type RequestLogValues } from '../store/request-log-table.js';

/** One operation of a batch, as plain data (it crosses to the spend thread as a message). */
export type SpendOp =
  | { op: 'reserve'; request: ReservationRequest }
  | { op: 'settle'; reservationId: string; entry: LedgerEntry; held: boolean }
  | { op: 'release'; reservationId: string }
  | { op: 'renew'; reservationId: string; expiresAt: number; now: number }
  | { op: 'sweep'; now: number }
  | { op: 'balance'; scope: CapScope; id: string; now: number }
  /** Request-log rows (src/request-logs/), committed with the batch they ride in. */
  | { op: 'log'; rows: RequestLogValues[] };

/** What one operation came to: its value, or the error it threw (the others of its batch still commit). */
export type OpResult = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Inserts a settlement's ledger row: the entry's columns in ledgerColumns order, reserved_at and reservation_id last.
 * Each column is read by name in code, not by a loop over the column names (a computed key each, some 23 ns), and
 * passed as an argument of its own: better-sqlite3 binds an array's values one lookup at a time, about 0.5 µs more for
 * a row this wide (bench/README.md, "twelfth session").
 */
function insertLedgerRow<T>(statement: { run(...values: unknown[]): T }, e: LedgerEntry, reservedAt: number, reservationId: string): T {
  return statement.run(
    e.request_id ?? 0, e.workspace_id ?? 0, e.key_id ?? 0, e.model ?? 0, e.channel ?? 0, e.kind ?? 0, e.input_tokens ?? 0, e.output_tokens ?? 0,
    e.cached_input_tokens ?? 0, e.units ?? 0, e.cost_micros ?? 0, e.overage_micros ?? 0, e.currency ?? 0, e.price ?? 0, e.created_at ?? 0, reservedAt, reservationId,
  );
}

// Checked once at load, on an entry whose every column holds its own name: insertLedgerRow passes the ledger's columns,
// each in its place, so a column added to the ledger cannot be left out of the row.
const passed = insertLedgerRow({ run: (...values: unknown[]) => values.join() }, Object.fromEntries(ledgerColumns.map((c) => [c, c])) as unknown as LedgerEntry, 'reserved_at' as unknown as number, 'reservation_id');
if (passed !== ledgerColumns.join()) throw new Error(`sqlite-spend-core.ts insertLedgerRow passes ${passed}, the ledger has ${ledgerColumns.join()}`);

/** An uncapped key in an uncapped workspace: admitted, nothing held. Shared, so that answer allocates nothing. */
export const notHeld: ReserveOutcome = Object.freeze({ ok: true, held: false });

/**
 * better-sqlite3 is synchronous, so a batch cannot interleave with other work on its connection; IMMEDIATE takes the
 * write lock up front, so other connections and processes on the same file (WAL, busy_timeout) wait their turn
 * instead of failing to upgrade a read. Reserves run one after another, so each check sees every hold before it.
 */
export class SqliteSpendCore {
  private readonly standing: ReturnType<typeof standingStatements>;
  private readonly write: ReturnType<typeof writeStatements>;
  /** Costs charged in the open batch, per `scope:id`, written to spend_totals once before it commits. */
  private readonly spentInBatch = new Map<string, { scope: CapScope; id: string; micros: number }>();
  private readonly transaction: BetterSqlite3.Transaction<(ops: SpendOp[]) => OpResult[]>;

  constructor(
    sqlite: BetterSqlite3.Database,
    private readonly caps: CapsReader,
    private readonly calendar = new BudgetCalendar(),
  ) {
    this.standing = standingStatements(sqlite);
    this.write = writeStatements(sqlite);
    this.transaction = sqlite.transaction((ops: SpendOp[]) => this.runAll(ops));
  }

  /** Runs the operations in order in one IMMEDIATE transaction; an operation that throws fails alone. */
  runBatch(ops: SpendOp[]): OpResult[] {
    return this.transaction.immediate(ops);
  }

  private runAll(ops: SpendOp[]): OpResult[] {
    this.spentInBatch.clear();
    const results = new Array<OpResult>(ops.length);
    for (let i = 0; i < ops.length; i++) {
      try {
        results[i] = { ok: true, value: this.run(ops[i]) };
      } catch (error) {
        results[i] = { ok: false, error };
      }
    }
    // One upsert per key and workspace charged in this batch, committed with the ledger rows.
    for (const { scope, id, micros } of this.spentInBatch.values()) this.write.addSpent.run(scope, id, micros);
    this.spentInBatch.clear();
    return results;
  }

  private run(op: SpendOp): unknown {
    switch (op.op) {
      case 'reserve':
        return this.reserve(op.request);
      case 'settle':
        return this.settle(op.reservationId, op.entry, op.held);
      case 'release':
        return void this.write.deleteReservation.run(op.reservationId);
      case 'renew':
        return this.write.extendReservation.run(op.expiresAt, op.reservationId, op.now).changes > 0;
      case 'sweep':
        this.write.deleteEndedPeriods.run(op.now - PERIOD_ROWS_KEPT_MS);
        return this.write.deleteExpired.run(op.now).changes;
      case 'balance':
        return this.balance(op.scope, op.id, op.now);
      case 'log':
        return this.appendLogs(op.rows);
    }
  }

  /** Inserts request-log rows (a row already there is skipped) and adds the ones inserted to their workspace's count. */
  private appendLogs(rows: RequestLogValues[]): undefined {
    // A batch's rows are nearly always of one workspace: its count is written once, when the workspace changes or at the
    // end (also when a row throws: the rows before it are in, and counted).
    let workspace = '';
    let inserted = 0;
    try {
      for (const row of rows) {
        if (this.write.insertRequestLog.run(...row).changes === 0) continue;
        const own = row[WORKSPACE_COLUMN] as string;
        if (own !== workspace) {
          if (inserted > 0) this.write.countRequestLogs.run(workspace, inserted);
          workspace = own;
          inserted = 0;
        }
        inserted++;
      }
    } finally {
      if (inserted > 0) this.write.countRequestLogs.run(workspace, inserted);
    }
    return undefined;
  }

  reserve(r: ReservationRequest): ReserveOutcome {
    const caps = this.caps.capsOf(r.keyId);
    // Nothing to hold against: an uncapped key in an uncapped workspace is admitted without a reservation row.
    if (uncapped(caps)) return notHeld;
    const refusedBy = this.refusal(caps!, r);
    if (refusedBy) return { ok: false, refusedBy };
    this.write.insertReservation.run(r.id, r.keyId, r.workspaceId, r.requestId, r.amountMicros, r.expiresAt, r.now, r.model ?? '');
    return { ok: true, held: true };
  }

  /** The first budget, key before workspace and all models before one, that refuses the request; undefined when all admit it. */
  private refusal(caps: Caps, r: ReservationRequest): CapStanding | undefined {
    const { keyCap, keyPeriod, workspaceCap, workspacePeriod } = caps;
    return (
      (keyCap === null ? undefined : this.standingOf('key', r.keyId, '', keyPeriod, keyCap, r)) ??
      this.modelStanding(caps, 'key', r.keyId, r) ??
      (workspaceCap === null ? undefined : this.standingOf('workspace', r.workspaceId, '', workspacePeriod, workspaceCap, r)) ??
      this.modelStanding(caps, 'workspace', r.workspaceId, r)
    );
  }

  private modelStanding(caps: Caps, scope: CapScope, id: string, r: ReservationRequest): CapStanding | undefined {
    if (!caps.modelCaps || !r.model) return undefined;
    for (const cap of caps.modelCaps) {
      if (cap.scope === scope && cap.model === r.model) return this.standingOf(scope, id, cap.model, cap.period, cap.capMicros, r);
    }
    return undefined;
  }

  /** Where a budget stands if it refuses `r.amountMicros`; undefined when it admits it. */
  private standingOf(scope: CapScope, id: string, model: string, period: BudgetPeriod, cap: number, r: ReservationRequest): CapStanding | undefined {
    let spentMicros: number;
    let reservedMicros: number;
    if (period === 'total' && model === '') {
      spentMicros = this.spentNow(scope, id);
      reservedMicros = this.standing.reservedBy[scope].get(id, r.now) ?? 0;
    } else {
      const start = this.calendar.start(period, r.now);
      spentMicros = this.periodSpent(scope, id, model, period, start);
      reservedMicros = this.standing.reservedInPeriod[scope].get({ id, model, start, now: r.now }) ?? 0;
    }
    if (spentMicros + reservedMicros + r.amountMicros <= cap) return undefined;
    return { scope, id, model: model || null, period, capMicros: cap, spentMicros, reservedMicros, resetsAt: this.calendar.resetsAt(period, r.now) };
  }

  /** Spent in one period of a budget on one model or all: its spend_periods row, started from the ledger when missing. */
  private periodSpent(scope: CapScope, id: string, model: string, period: BudgetPeriod, start: number): number {
    const kept = this.standing.periodSpentOf.get(scope, id, model, period, start);
    if (kept !== undefined) return kept;
    const spent = this.standing.ledgerSince[scope].get({ id, model, start }) ?? 0;
    this.standing.insertPeriod.run(scope, id, model, period, start, spent);
    return spent;
  }

  /** Spend totals are the ledger summed; inside a batch they include what the batch charged so far. */
  private spentNow(scope: CapScope, id: string): number {
    return (this.standing.spentOf.get(scope, id) ?? 0) + (this.spentInBatch.get(`${scope}:${id}`)?.micros ?? 0);
  }

  balance(scope: CapScope, id: string, now: number): Balance {
    return { spentMicros: this.spentNow(scope, id), reservedMicros: this.standing.reservedBy[scope].get(id, now) ?? 0 };
  }

  /** Drops the reservation and writes the ledger row once; false when the reservation was already settled. */
  settle(reservationId: string, entry: LedgerEntry, held: boolean): boolean {
    if (held) this.write.deleteReservation.run(reservationId);
    const reservedAt = Number(entry.reserved_at ?? Number(entry.created_at) * 1000);
    if (insertLedgerRow(this.write.insertLedger, entry, reservedAt, reservationId).changes === 0) return false;
    const cost = Number(entry.cost_micros ?? 0);
    if (cost > 0) this.charge(entry, cost, reservedAt);
    return true;
  }

  private charge(entry: LedgerEntry, cost: number, reservedAt: number): void {
    const keyId = String(entry.key_id);
    const workspaceId = String(entry.workspace_id);
    this.addToBatch('key', keyId, cost);
    this.addToBatch('workspace', workspaceId, cost);
    // Only keys under a periodic or per-model cap keep period rows; others skip the statement.
    if (!this.caps.capsOf(keyId)?.periodic) return;
    const starts = this.calendar.starts(reservedAt);
    const model = String(entry.model);
    this.write.addToPeriods.run(cost, 'key', keyId, model, starts.daily, starts.weekly, starts.monthly);
    this.write.addToPeriods.run(cost, 'workspace', workspaceId, model, starts.daily, starts.weekly, starts.monthly);
  }

  private addToBatch(scope: CapScope, id: string, micros: number): void {
    const key = `${scope}:${id}`;
    const entry = this.spentInBatch.get(key);
    if (entry) entry.micros += micros;
    else this.spentInBatch.set(key, { scope, id, micros });
  }
}
