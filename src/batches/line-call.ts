// One batch line as a pipeline call: the same stages as a client's request (translation, billing, logs need nothing new),
// with no client. Its answer is kept for the output file; it is priced at the models' batch prices; its charge is one the
// batch's reservation already covers, under an id fixed by the batch and the line, so a line re-run after a crash is
// billed once (the ledger keeps one row per charge id).
import type { BeginOptions, Charge, ChargeRef, Meter, SettleObserver, SettleOutcome, Settlement } from '../billing/charge.js';
import { ValidationError } from '../base/errors.js';
import type { LoadedConfig } from '../engine/loaded-config.js';
import type { PriceConfig } from '../config/types.js';
import type { ClientStream } from '../pipeline/call.js';
import { KeptCall } from '../pipeline/kept-call.js';
import type { LedgerEntry } from '../store/usage-ledger.js';


const batchViews = new WeakMap<LoadedConfig, LoadedConfig>();

/** The config as a batch line sees it: every model priced at its `price.batch`, else its list price. One view per config. */
export function batchPricedConfig(config: LoadedConfig): LoadedConfig {
  let view = batchViews.get(config);
  if (view) return view;
  const routes = new Map<object, object>();
  const priced = <R extends { model: { price: PriceConfig } }>(route: R): R => {
    const batch = route.model.price.batch;
    if (!batch) return route;
    let made = routes.get(route) as R | undefined;
    if (!made) routes.set(route, (made = { ...route, model: { ...route.model, price: { ...batch, currency: route.model.price.currency } } }));
    return made;
  };
  const models = new Map([...config.models].map(([id, list]) => [id, list.map(priced)] as const));
  view = { ...config, models };
  batchViews.set(config, view);
  return view;
}

/** A charge the batch's reservation covers: nothing held of its own, settled once under its fixed id. */
class LineCharge implements Charge {
  ended = false;

  constructor(
    readonly ref: ChargeRef,
    private readonly settleEntry: (id: string, entry: LedgerEntry) => Promise<boolean>,
    private readonly observer: SettleObserver,
  ) {}

  async settle(s: Settlement): Promise<SettleOutcome> {
    if (this.ended) return { charged: false, chargedMicros: 0, overageMicros: 0 };
    this.ended = true;
    const ref = this.ref;
    const cost = Number.isFinite(s.costMicros) ? Math.max(0, Math.round(s.costMicros)) : ref.amountMicros;
    const entry: LedgerEntry = {
      request_id: ref.requestId,
      workspace_id: ref.workspaceId,
      key_id: ref.keyId,
      model: ref.model,
      channel: s.route?.channel.id ?? ref.channel,
      kind: ref.kind,
      input_tokens: s.inputTokens ?? 0,
      output_tokens: s.outputTokens ?? 0,
      cached_input_tokens: s.cachedInputTokens ?? 0,
      units: s.units ?? 0,
      cost_micros: cost,
      overage_micros: Math.max(0, cost - ref.amountMicros),
      currency: ref.currency,
      price: ref.price,
      created_at: Math.floor(Date.now() / 1000),
      reserved_at: ref.reservedAt,
    };
    this.observer.settled(entry);
    const charged = await this.settleEntry(ref.id, entry);
    return { charged, chargedMicros: charged ? cost : 0, overageMicros: charged ? entry.overage_micros as number : 0 };
  }

  settleReserved(): Promise<SettleOutcome> {
    return this.settle({ costMicros: this.ref.amountMicros });
  }

  async release(): Promise<void> {
    this.ended = true;
  }

  async renew(): Promise<boolean> {
    return true;
  }

  close(): Promise<void> {
    return this.release();
  }
}

/** The meter of one line: its charge id is `chargeId`, its budget the batch's reservation. */
export function lineMeter(chargeId: string, reservedAt: number, settleEntry: (id: string, entry: LedgerEntry) => Promise<boolean>, observer: SettleObserver): Meter {
  return {
    async begin({ auth, route, requestId, estimateMicros }: BeginOptions) {
      const ref: ChargeRef = {
        id: chargeId,
        requestId,
        keyId: auth.keyId,
        workspaceId: auth.workspaceId,
        amountMicros: Math.max(0, Math.ceil(estimateMicros)),
        model: route.model.id,
        channel: route.channel.id,
        kind: route.model.kind,
        currency: route.model.price.currency,
        price: JSON.stringify(route.model.price),
        held: false,
        reservedAt,
      };
      return new LineCharge(ref, settleEntry, observer);
    },
    resume() {
      throw new Error('a batch line charge is never resumed');
    },
  };
}

/** A line's call: its answer kept for the output file; it cannot stream (creation refused `stream: true`). */
export class LineCall extends KeptCall {
  /** A line read back from its vendor's batch: its input was checked when it was sent (src/pipeline/guard.ts). */
  inputChecked?: boolean;

  override openStream(): ClientStream {
    throw new ValidationError('a batch line cannot stream; drop "stream" from its body', 'stream');
  }
}
