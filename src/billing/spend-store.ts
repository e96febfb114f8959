// Where spending caps are enforced: reservations and spent totals behind one interface (SQLite now, Redis for replicas later).
import type { LedgerEntry } from '../store/usage-ledger.js';

export type CapScope = 'key' | 'workspace';

/** The caps that apply to one request, read fresh from the database at reserve time (null: no cap). */
export interface SpendCaps {
  keyCapMicros: number | null;
  workspaceCapMicros: number | null;
}

export interface ReservationRequest {
  id: string;
  keyId: string;
  workspaceId: string;
  requestId: string;
  amountMicros: number;
  caps: SpendCaps;
  /** Unix milliseconds. */
  now: number;
  expiresAt: number;
}

/** Where a cap stood when it refused a reservation. */
export interface CapStanding {
  scope: CapScope;
  id: string;
  capMicros: number;
  spentMicros: number;
  reservedMicros: number;
}

export type ReserveOutcome = { ok: true } | { ok: false; refusedBy: CapStanding };

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
  /** Holds `amountMicros` unless spent + reserved + amount would pass the key's or the workspace's cap. */
  reserve(request: ReservationRequest): Promise<ReserveOutcome>;
  /** Drops the reservation and records the ledger entry once; false when this reservation was already settled. */
  settle(reservationId: string, entry: LedgerEntry): Promise<boolean>;
  /** Drops the reservation, charging nothing. */
  release(reservationId: string): Promise<void>;
  /** Drops reservations expired at `now`; returns how many. */
  sweep(now: number): Promise<number>;
  balance(scope: CapScope, id: string, now: number): Promise<Balance>;
}
