// The resolve stage's model lookup for a call: the model's routes as of the call's clock (aliases and retirement
// resolved), and the answer told of the model's lifecycle (`deprecation`, `sunset`), whatever the answer turns out to be
// (a retired model's refusal, or its replacement's answer, included).
import type { ModelKind, ModelRoute, RouteNode } from '../config/types.js';
import { lifecycleHeaders, resolveModel, routesOf } from '../engine/models.js';
import type { Call } from './call.js';

export function resolveCallModel(call: Call, modelId: unknown, kind: ModelKind): ModelRoute[] {
  const asked = typeof modelId === 'string' ? routesOf(call.config, modelId)?.[0].model : undefined;
  if (asked && (asked.deprecatedAt || asked.retiresAt)) for (const [name, value] of lifecycleHeaders(asked)) call.header(name, value);
  return resolveModel(call.config, modelId, kind, () => call.services.now(), (node) => routeCall(call, node));
}

/** A route's attempts for this call, ranked by its strategy; the answer names the route (x-gateway-route). */
function routeCall(call: Call, node: RouteNode): ModelRoute[] {
  call.header('x-gateway-route', node.id);
  return call.upstreams.routeAttempts(node, call);
}
