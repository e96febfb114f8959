// The reserve stage: the worst case held against the key's and the workspace's caps, as one Charge guard.
import type { ModelRoute } from '../config/types.js';
import type { Charge } from '../billing/meter.js';
import type { Call } from './call.js';

export function reserve(call: Call, route: ModelRoute, estimateMicros: number): Promise<Charge> {
  return call.services.meter.begin({ auth: call.auth, route, requestId: call.req.id, estimateMicros });
}
