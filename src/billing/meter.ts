// The billing hook every billed endpoint goes through: reserve the worst case before the upstream call, settle or release after it.
import { randomUUID } from 'node:crypto';
import type { AuthContext } from '../auth/authenticate.js';
import type { ModelRoute } from '../config/types.js';
import type { Metrics } from '../metrics.js';
import { capExhaustedError } from './spend-caps.js';
import type { SpendStore } from './spend-store.js';

export interface Settlement {
  costMicros: number;
  inputTokens?: number;
  outputTokens?: number;
  cachedInputTokens?: number;
  /** Images, video seconds or requests: whatever the price counts besides tokens. */
  units?: number;
}

export interface Charge {
  /** Releases the reservation and charges the actual cost, once; later calls (settle, release) are ignored. */
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
  /** Reserves the estimate against the key's and the workspace's caps; throws PaymentRequiredError (402) when either would pass. */
  begin(options: BeginOptions): Promise<Charge>;
}

export interface MeterOptions {
  store: SpendStore;
  /** How long a reservation holds budget when nobody settles it (the process died mid-request). */
  reservationTtlMs: number;
  metrics?: Metrics;
  now?: () => number;
}

export function createReservingMeter({ store, reservationTtlMs, metrics, now = Date.now }: MeterOptions): Meter {
  return {
    async begin({ auth, route, requestId, estimateMicros }) {
      const amountMicros = Math.max(0, Math.ceil(estimateMicros));
      const id = `rsv_${randomUUID().replace(/-/g, '')}`;
      const at = now();
      const outcome = await store.reserve({ id, keyId: auth.keyId, workspaceId: auth.workspaceId, requestId, amountMicros, now: at, expiresAt: at + reservationTtlMs });
      if (!outcome.ok) throw capExhaustedError(outcome.refusedBy, amountMicros);

      let done = false;
      const charge: Charge = {
        async settle(s) {
          if (done) return;
          done = true;
          const charged = await store.settle(id, {
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
            cost_micros: Math.max(0, Math.round(s.costMicros)),
            currency: route.model.price.currency,
            price: JSON.stringify(route.model.price),
            created_at: Math.floor(now() / 1000),
          });
          if (charged) metrics?.recordUsage(route, s);
        },
        async release() {
          if (done) return;
          done = true;
          await store.release(id);
        },
        settleReserved: () => charge.settle({ costMicros: amountMicros }),
      };
      return charge;
    },
  };
}
