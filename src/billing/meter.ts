// The billing guard every billed upstream call holds: reserve the worst case first, then settle once or release.
import type { Metrics } from '../base/metrics.js';
import { capExhaustedError } from './spend-caps.js';
import type { SpendStore } from './spend-store.js';
import type { BeginOptions, Charge, ChargeRef, Meter, SettleObserver, SettleOutcome, Settlement } from './charge.js';
import { sortableId } from '../store/sortable-id.js';
import type { LedgerEntry } from '../store/usage-ledger.js';
import { ownedReservationId } from './reservation-owners.js';

export type { BeginOptions, Charge, ChargeRef, Meter, SettleObserver, SettleOutcome, Settlement } from './charge.js';

export interface MeterOptions {
  store: SpendStore;
  /** How long a reservation holds budget when nobody settles it (the process died mid-request). */
  reservationTtlMs: number;
  metrics?: Metrics;
  now?: () => number;
  /** This process's tag, ending each reservation id, so a sweep can release what a dead process held. */
  ownerTag?: string;
}

const unchanged: SettleOutcome = Object.freeze({ charged: false, chargedMicros: 0, overageMicros: 0 });

/** A price as the ledger records it, spelled once per price object (prices are fixed for a config's life). */
const priceJson = new WeakMap<object, string>();
function priceText(price: object): string {
  let text = priceJson.get(price);
  if (text === undefined) priceJson.set(price, (text = JSON.stringify(price)));
  return text;
}

/** The guard of one reservation; one object a request, its methods shared. */
class ReservedCharge implements Charge {
  ended = false;
  /** Set when a lapsed reservation was admitted again for less than it held: the most the settlement may charge. */
  private ceiling?: number;

  constructor(
    readonly ref: ChargeRef,
    private readonly store: SpendStore,
    private readonly metrics: Metrics | undefined,
    private readonly now: () => number,
    private readonly observer?: SettleObserver,
  ) {}

  async settle(s: Settlement): Promise<SettleOutcome> {
    if (this.ended) return unchanged;
    this.ended = true;
    const ref = this.ref;
    const cost = Number.isFinite(s.costMicros) ? Math.max(0, Math.round(s.costMicros)) : ref.amountMicros;
    // Billing follows the usage the upstream reported (the operator pays the provider's invoice): charged in full. What it
    // cost beyond the reservation (input the estimate could not see) is recorded; the cap may be overshot by this request alone.
    // A reservation that lapsed and could be admitted again only in part sets a ceiling: past it nothing is charged (it
    // is recorded as overage), so such a settlement never takes spend past a cap.
    const chargedMicros = this.ceiling === undefined ? cost : Math.min(cost, this.ceiling);
    const overageMicros = this.ceiling === undefined ? Math.max(0, cost - ref.amountMicros) : cost - chargedMicros;
    const served = s.route;
    const entry: LedgerEntry = {
      request_id: ref.requestId,
      workspace_id: ref.workspaceId,
      key_id: ref.keyId,
      // The model that served (a route's failover may land on another model than the one reserved for).
      model: served?.model.id ?? ref.model,
      channel: served?.channel.id ?? ref.channel,
      kind: ref.kind,
      input_tokens: s.inputTokens ?? 0,
      output_tokens: s.outputTokens ?? 0,
      cached_input_tokens: s.cachedInputTokens ?? 0,
      units: s.units ?? 0,
      cost_micros: chargedMicros,
      overage_micros: overageMicros,
      currency: ref.currency,
      price: served ? priceText(served.model.price) : ref.price,
      created_at: Math.floor(this.now() / 1000),
      reserved_at: ref.reservedAt,
    };
    this.observer?.settled(entry);
    const charged = await this.store.settle(ref.id, entry, ref.held !== false);
    if (charged) this.metrics?.recordCharge(ref, s, chargedMicros, overageMicros);
    return charged ? { charged, chargedMicros, overageMicros } : unchanged;
  }

  settleReserved(): Promise<SettleOutcome> {
    return this.settle({ costMicros: this.ref.amountMicros });
  }

  async release(): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    if (this.ref.held !== false) await this.store.release(this.ref.id);
  }

  close(): Promise<void> {
    return this.release();
  }

  async renew(ttlMs: number): Promise<boolean> {
    const ref = this.ref;
    if (this.ended || ref.held === false) return true;
    const at = this.now();
    if (await this.store.renew(ref.id, at + ttlMs, at)) return true;
    // Lapsed: whatever is left of the row goes, and the amount is reserved again under the same id, or what still fits.
    await this.store.release(ref.id);
    const request = { id: ref.id, keyId: ref.keyId, workspaceId: ref.workspaceId, requestId: ref.requestId, now: at, expiresAt: at + ttlMs };
    let outcome = await this.store.reserve({ ...request, amountMicros: ref.amountMicros });
    if (!outcome.ok) {
      const { capMicros, spentMicros, reservedMicros } = outcome.refusedBy;
      const room = Math.max(0, Math.min(ref.amountMicros, capMicros - spentMicros - reservedMicros));
      outcome = room > 0 ? await this.store.reserve({ ...request, amountMicros: room }) : outcome;
      // The settlement charges at most this (the rest is recorded as overage, never charged).
      ref.amountMicros = outcome.ok ? room : 0;
      this.ceiling = ref.amountMicros;
    }
    ref.held = outcome.ok ? outcome.held : false;
    return false;
  }
}

export function createReservingMeter({ store, reservationTtlMs, metrics, now = Date.now, ownerTag }: MeterOptions): Meter {
  const chargeFor = (ref: ChargeRef, observer?: SettleObserver): Charge => new ReservedCharge(ref, store, metrics, now, observer);

  return {
    async begin({ auth, route, requestId, estimateMicros, reservationTtlMs: ttlMs = reservationTtlMs, observer }) {
      const amountMicros = Math.max(0, Math.ceil(estimateMicros));
      const at = now();
      const ref: ChargeRef = {
        // Time-ordered, so the ledger's unique index on it grows at its end.
        id: ownerTag ? ownedReservationId(sortableId('rsv'), ownerTag) : sortableId('rsv'),
        requestId,
        keyId: auth.keyId,
        workspaceId: auth.workspaceId,
        amountMicros,
        model: route.model.id,
        channel: route.channel.id,
        kind: route.model.kind,
        currency: route.model.price.currency,
        price: priceText(route.model.price),
        reservedAt: at,
      };
      const outcome = await store.reserve({ id: ref.id, keyId: ref.keyId, workspaceId: ref.workspaceId, requestId, amountMicros, model: ref.model, now: at, expiresAt: at + ttlMs });
      if (!outcome.ok) throw capExhaustedError(outcome.refusedBy, amountMicros);
      ref.held = outcome.held;
      return chargeFor(ref, observer);
    },
    resume: (ref) => chargeFor(ref),
  };
}
