// The reserve stage: the worst case held against the key's and the workspace's caps, as one Charge guard (traced when tracing is on).
import type { ModelRoute } from '../config/types.js';
import type { Charge } from '../billing/meter.js';
import type { Call } from './call.js';

export function reserve(call: Call, route: ModelRoute, estimateMicros: number): Promise<Charge> {
  const tracing = call.services.tracing;
  if (tracing) return tracing.reserve(call, route, estimateMicros);
  return call.services.meter.begin({ auth: call.auth, route, requestId: call.req.id, estimateMicros });
}
