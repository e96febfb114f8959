// The SpendStore on the embedded SQLite database: each operation is one synchronous IMMEDIATE transaction.
import type BetterSqlite3 from 'better-sqlite3';
import { ChangeCache } from '../store/change-version.js';
import type { LedgerEntry } from '../store/usage-ledger.js';
import type { Balance, CapScope, CapStanding, ReservationRequest, ReserveOutcome, SpendStore } from './spend-store.js';

interface Caps {
  keyCap: number | null;
  workspaceCap: number | null;
}

const ledgerColumns = [
  'request_id', 'workspace_id', 'key_id', 'model', 'channel', 'kind', 'input_tokens', 'output_tokens',
  'cached_input_tokens', 'units', 'cost_micros', 'overage_micros', 'currency', 'price', 'created_at', 'reservation_id',
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
}

export function createSqliteSpendStore(sqlite: BetterSqlite3.Database, { changeVersion, settleBatchMs = 0 }: SqliteSpendOptions = {}): SpendStore {
  const readCaps = sqlite.prepare<[string], Caps>(
    'select k.spend_cap_micros as keyCap, w.spend_cap_micros as workspaceCap from api_keys k join workspaces w on w.id = k.workspace_id where k.id = ?',
  );
  // Caps by key, kept while the change counter of keys and workspaces stands still (a cap change bumps it).
  const capsCache = new ChangeCache<Caps | undefined>();
  const capsOf = (keyId: string): Caps | undefined => {
    const version = changeVersion?.();
    if (version === undefined) return readCaps.get(keyId);
    const caps = capsCache.at(version);
    if (!caps.has(keyId)) caps.set(keyId, readCaps.get(keyId));
    return caps.get(keyId);
  };
  const spentOf = sqlite.prepare<[string, string], number>('select spent_micros from spend_totals where scope = ? and subject_id = ?').pluck();
  const reservedBy = {
    key: sqlite.prepare<[string, number], number>('select coalesce(sum(amount_micros), 0) from spend_reservations where key_id = ? and expires_at > ?').pluck(),
    workspace: sqlite.prepare<[string, number], number>('select coalesce(sum(amount_micros), 0) from spend_reservations where workspace_id = ? and expires_at > ?').pluck(),
  };
  const insertReservation = sqlite.prepare(
    'insert into spend_reservations (id, key_id, workspace_id, request_id, amount_micros, expires_at, created_at) values (?, ?, ?, ?, ?, ?, ?)',
  );
  const deleteReservation = sqlite.prepare<[string]>('delete from spend_reservations where id = ?');
  const insertLedger = sqlite.prepare(
    `insert into usage_ledger (${ledgerColumns.join(', ')}) values (${ledgerColumns.map(() => '?').join(', ')}) on conflict do nothing`,
  );
  const extendReservation = sqlite.prepare<[number, string, number]>('update spend_reservations set expires_at = max(expires_at, ?) where id = ? and expires_at > ?');
  const deleteExpired = sqlite.prepare<[number]>('delete from spend_reservations where expires_at <= ?');
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

  const standing = (scope: CapScope, id: string, cap: number | null, amount: number, now: number): CapStanding | undefined => {
    if (cap === null) return undefined;
    const { spentMicros, reservedMicros } = balanceOf(scope, id, now);
    return spentMicros + reservedMicros + amount > cap ? { scope, id, capMicros: cap, spentMicros, reservedMicros } : undefined;
  };

  const reserveOne = (r: ReservationRequest): ReserveOutcome => {
    const caps = capsOf(r.keyId);
    const keyCap = caps?.keyCap ?? null;
    const workspaceCap = caps?.workspaceCap ?? null;
    // Nothing to hold against: an uncapped key in an uncapped workspace is admitted without a reservation row.
    if (keyCap === null && workspaceCap === null) return { ok: true, held: false };
    const refusedBy = standing('key', r.keyId, keyCap, r.amountMicros, r.now) ?? standing('workspace', r.workspaceId, workspaceCap, r.amountMicros, r.now);
    if (refusedBy) return { ok: false, refusedBy };
    insertReservation.run(r.id, r.keyId, r.workspaceId, r.requestId, r.amountMicros, r.expiresAt, r.now);
    return { ok: true, held: true };
  };

  const settleOne = (reservationId: string, entry: LedgerEntry, held: boolean): boolean => {
    if (held) deleteReservation.run(reservationId);
    // reservation_id is the last column; the others come from the entry.
    const values: unknown[] = new Array(ledgerColumns.length);
    for (let i = 0; i < ledgerColumns.length - 1; i++) values[i] = entry[ledgerColumns[i] as Exclude<(typeof ledgerColumns)[number], 'reservation_id'>] ?? 0;
    values[ledgerColumns.length - 1] = reservationId;
    if (insertLedger.run(values).changes === 0) return false;
    const cost = Number(entry.cost_micros ?? 0);
    if (cost > 0) {
      addToBatch('key', String(entry.key_id), cost);
      addToBatch('workspace', String(entry.workspace_id), cost);
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
      const caps = capsOf(request.keyId);
      if ((caps?.keyCap ?? null) === null && (caps?.workspaceCap ?? null) === null) return Promise.resolve({ ok: true, held: false });
      return enqueue(() => reserveOne(request), true);
    },
    settle: (reservationId, entry, held = true) => enqueue(() => settleOne(reservationId, entry, held), false),
    commitQueued,
    release: async (reservationId) => void deleteReservation.run(reservationId),
    renew: async (reservationId, expiresAt, now) => extendReservation.run(expiresAt, reservationId, now).changes > 0,
    sweep: async (now) => deleteExpired.run(now).changes,
    balance: async (scope, id, now) => {
      commitQueued();
      return balanceOf(scope, id, now);
    },
  };
}
