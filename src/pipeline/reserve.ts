// The reserve stage: the worst case held against the key's and the workspace's caps, as one Charge guard (traced when tracing is on).
import type { ModelRoute } from '../config/types.js';
import type { Charge } from '../billing/meter.js';
import type { Call } from './call.js';
import type { Tracing } from './tracing.js';

export function reserve(call: Call, route: ModelRoute, estimateMicros: number, reservationTtlMs?: number): Promise<Charge> {
  // Tracing is assembled beside the pipeline's dependencies (its type names the Call, so PipelineDeps cannot).
  const tracing = (call.services as { tracing?: Tracing }).tracing;
  if (tracing) return tracing.reserve(call, route, estimateMicros, reservationTtlMs);
  return call.services.meter.begin({ auth: call.auth, route, requestId: call.requestId, estimateMicros, reservationTtlMs, observer: call.settlements });
}
