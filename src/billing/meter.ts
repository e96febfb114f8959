// The billing hook every billed endpoint goes through: begin before the upstream call, settle or release after it.
import type { AuthContext } from '../auth/authenticate.js';
import type { ModelRoute } from '../config/types.js';
import type { Db } from '../store/database.js';
import { appendLedger } from '../store/usage-ledger.js';
import type { Metrics } from '../metrics.js';

export interface Settlement {
  costMicros: number;
  inputTokens?: number;
  outputTokens?: number;
  cachedInputTokens?: number;
  /** Images, video seconds or requests: whatever the price counts besides tokens. */
  units?: number;
}

export interface Charge {
  /** Charges the actual cost once; later calls are ignored. */
  settle(settlement: Settlement): Promise<void>;
  /** Charges nothing (the upstream failed before doing billable work). */
  release(): Promise<void>;
  /** Charges the reserved worst case (the client went away before any usage was reported). */
  settleReserved(): Promise<void>;
}

export interface BeginOptions {
  auth: AuthContext;
  route: ModelRoute;
  requestId: string;
  /** Worst-case cost of the request in micro-units, reserved against the spending caps. */
  estimateMicros: number;
}

export interface Meter {
  begin(options: BeginOptions): Promise<Charge>;
}

/** Writes one ledger row per settled charge. Spending caps build on this in the billing capability. */
export function createLedgerMeter(db: Db, metrics?: Metrics): Meter {
  return {
    async begin({ auth, route, requestId, estimateMicros }) {
      let done = false;
      const charge: Charge = {
        async settle(s) {
          if (done) return;
          done = true;
          await appendLedger(db, {
            request_id: requestId,
            workspace_id: auth.workspaceId,
            key_id: auth.keyId,
            model: route.model.id,
            channel: route.channel.id,
            kind: route.model.kind,
            input_tokens: s.inputTokens ?? 0,
            output_tokens: s.outputTokens ?? 0,
            cached_input_tokens: s.cachedInputTokens ?? 0,
            units: s.units ?? 0,
            cost_micros: s.costMicros,
            currency: route.model.price.currency,
            price: JSON.stringify(route.model.price),
            created_at: Math.floor(Date.now() / 1000),
          });
          metrics?.recordUsage(route, s);
        },
        async release() {
          done = true;
        },
        settleReserved: () => charge.settle({ costMicros: estimateMicros }),
      };
      return charge;
    },
  };
}
