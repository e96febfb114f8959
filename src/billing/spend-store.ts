// Where spending caps are enforced: reservations and spent totals behind one interface (SQLite embedded, PostgreSQL for replicas).
import type { LedgerEntry } from '../store/usage-ledger.js';
import type { RequestLogValues } from '../store/request-log-table.js';
import type { BudgetPeriod } from '../config/periods.js';

export type CapScope = 'key' | 'workspace';

export interface ReservationRequest {
  id: string;
  keyId: string;
  workspaceId: string;
  requestId: string;
  amountMicros: number;
  /** The model requested, checked against caps on one model; none: only the caps on all models apply. */
  model?: string;
  /** Unix milliseconds: also the budget period the reservation belongs to. */
  now: number;
  expiresAt: number;
}

/** Where a cap stood when it refused a reservation. */
export interface CapStanding {
  scope: CapScope;
  id: string;
  /** The model the cap is on; null for a cap on all models. */
  model: string | null;
  period: BudgetPeriod;
  capMicros: number;
  /** Spent and reserved in the current period. */
  spentMicros: number;
  reservedMicros: number;
  /** Unix milliseconds when the period ends and the budget resets; null for `total`. */
  resetsAt: number | null;
}

/** `held`: a reservation row was written (false for an uncapped key in an uncapped workspace: nothing to hold). */
export type ReserveOutcome = { ok: true; held: boolean } | { ok: false; refusedBy: CapStanding };

export interface Balance {
  spentMicros: number;
  /** Held by unexpired reservations. */
  reservedMicros: number;
}

/**
 * Every method is atomic on its own. An implementation must make reserve a single
 * check-and-hold step (a transaction, a Lua script), or concurrent requests overspend.
 */
export interface SpendStore {
  /**
   * Holds `amountMicros` unless spent + reserved + amount in the current period would pass a cap of the key or the
   * workspace (on all models, or on the requested one). Caps are read at this moment from the metadata database, so
   * a cap changed by the admin CLI applies to the next request without a restart. Spent and reserved count only what
   * was reserved in the period that `now` falls in.
   */
  reserve(request: ReservationRequest): Promise<ReserveOutcome>;
  /**
   * Drops the reservation and records the ledger entry once; false when this reservation was already settled.
   * `held: false` says no reservation row was written, so there is none to drop. The cost counts in the budget period
   * of `entry.reserved_at` (of `created_at` when absent).
   */
  settle(reservationId: string, entry: LedgerEntry, held?: boolean): Promise<boolean>;
  /**
   * True on a store that commits settlements in batches (the embedded one): an answer may go out before its settlement
   * commits, the reservation holding the cap until the batch lands. False where each settlement commits on its own.
   */
  readonly commitsInBatches: boolean;
  /**
   * Present on a store that batches its commits: hands over what is queued now and resolves once it (and every batch
   * before it) has committed. Awaited before this process reads the ledger (any query through the Db, a metrics
   * scrape) and on close.
   */
  commitQueued?(): Promise<void>;
  /** Present on a store with resources of its own (the spend thread): commits what is queued and frees them. */
  close?(): Promise<void>;
  /**
   * Moves a live reservation's expiry to `expiresAt` (never earlier than it was); false when it has lapsed (expired or
   * swept at `now`), so the budget it held may have been handed to others: its settlement must be admitted again.
   */
  renew(reservationId: string, expiresAt: number, now: number): Promise<boolean>;
  /**
   * Present on the gateway's stores: writes request-log rows (src/request-logs/) with the settlements, in the batch that
   * is out next (no commit or round trip of their own while settlements flow); resolves once they have committed.
   */
  appendLogs?(rows: RequestLogValues[]): Promise<void>;
  /** Drops the reservation, charging nothing. */
  release(reservationId: string): Promise<void>;
  /** Drops reservations expired at `now` (returns how many) and the spend kept for periods long over. */
  sweep(now: number): Promise<number>;
  /** All-model lifetime spend of a key or workspace, and what unexpired reservations hold. */
  balance(scope: CapScope, id: string, now: number): Promise<Balance>;
}
