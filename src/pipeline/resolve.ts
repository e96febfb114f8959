// The resolve stage's model lookup for a call: the model's routes as of the call's clock (aliases and retirement
// resolved), and the answer told of the model's lifecycle (`deprecation`, `sunset`), whatever the answer turns out to be.
import type { ModelKind, ModelRoute } from '../config/types.js';
import { lifecycleHeaders, resolveModel, routesOf } from '../engine/models.js';
import type { Call } from './call.js';

export function resolveCallModel(call: Call, modelId: unknown, kind: ModelKind): ModelRoute[] {
  const routes = resolveModel(call.config, modelId, kind, call.services.now());
  // The model asked for (a retired one's replacement may be serving): its days are what the client should hear of.
  const asked = routes[0].model.id === modelId ? routes[0].model : routesOf(call.config, modelId as string)![0].model;
  if (asked.deprecatedAt || asked.retiresAt) for (const [name, value] of lifecycleHeaders(asked)) call.header(name, value);
  return routes;
}
