// What a billed call holds and what settles it: the Charge, its reference and the Meter that hands charges out.
import type { AuthContext } from '../auth/authenticate.js';
import type { ModelRoute } from '../config/types.js';
import type { LedgerEntry } from '../store/usage-ledger.js';

export interface Settlement {
  costMicros: number;
  inputTokens?: number;
  outputTokens?: number;
  cachedInputTokens?: number;
  /** Images, video seconds or requests: whatever the price counts besides tokens. */
  units?: number;
  /** The route that served, when a fallback did rather than the route the charge was reserved on. */
  route?: ModelRoute;
}

export interface SettleOutcome {
  /** False when the charge had already ended (settled or released) and this call charged nothing. */
  charged: boolean;
  chargedMicros: number;
  /** What the usage cost beyond the reservation: charged, and recorded on the ledger row (and a metric) as overage. */
  overageMicros: number;
}

/** Everything needed to settle a charge later, from another process or replica: it is addressed by its id. */
export interface ChargeRef {
  id: string;
  requestId: string;
  keyId: string;
  workspaceId: string;
  amountMicros: number;
  model: string;
  channel: string;
  kind: string;
  currency: string;
  /** JSON of the price the reservation was made under. */
  price: string;
  /** False when no reservation row was written (nothing capped): settling has none to drop. Absent means true. */
  held?: boolean;
  /** Unix milliseconds of the reservation: the budget period its cost counts in, whenever it settles. */
  reservedAt?: number;
}

/**
 * One guard object per billed request. It ends exactly once: settled (reported usage charged in full, any excess
 * over the reservation recorded as overage), settled at the reservation, or released. `close()` in a `finally` releases whatever was not settled.
 */
export interface Charge {
  readonly ref: ChargeRef;
  readonly ended: boolean;
  settle(settlement: Settlement): Promise<SettleOutcome>;
  /** Charges the reserved worst case (work was done but its usage cannot be known). */
  settleReserved(): Promise<SettleOutcome>;
  /** Charges nothing (the upstream failed before doing billable work). */
  release(): Promise<void>;
  /**
   * Keeps the reservation holding for `ttlMs` more (a task's, renewed with its lease). When it has lapsed meanwhile,
   * the budget it held may be someone else's now: the charge is admitted against the caps again, for as much as they
   * still allow (down to nothing), so its settlement can never take spend past a cap. False when it had lapsed.
   */
  renew(ttlMs: number): Promise<boolean>;
  /** Releases the charge unless it already ended. */
  close(): Promise<void>;
}

/** Told what a charge settled for, as the ledger records it (the request log copies it). */
export interface SettleObserver {
  settled(entry: LedgerEntry): void;
}

/** What a reservation reads of what is billed: a model's route, or anything priced like one (an MCP tool). */
export interface BilledRoute {
  model: { id: string; kind: string; price: { currency: string } };
  channel: { id: string };
}

export interface BeginOptions {
  auth: AuthContext;
  route: BilledRoute;
  requestId: string;
  /** Worst-case cost of the request in micro-units, reserved against the spending caps. */
  estimateMicros: number;
  /** How long this reservation holds budget if nobody settles it (a task's lifetime); defaults to the meter's. */
  reservationTtlMs?: number;
  /** Told what the charge settled for, before the ledger row commits. */
  observer?: SettleObserver;
}

export interface Meter {
  /** Reserves the estimate against the key's and the workspace's caps; throws PaymentRequiredError (402) when either would pass. */
  begin(options: BeginOptions): Promise<Charge>;
  /** The charge a reference names, e.g. a task's, settled by a process other than the one that reserved it. */
  resume(ref: ChargeRef): Charge;
}
