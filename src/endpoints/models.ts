// GET /v1/models: the models this key may use, in the shape the openai SDK's models.list() reads, one entry per model
// with the other ids it answers to (`aliases`) and its lifecycle (`deprecated_at`, `retires_at`, `replacement`, `retired`).
import { hasScope } from '../auth/authenticate.js';
import { scopeForKind } from '../auth/scopes.js';
import { isRetired } from '../config/cross-check-models.js';
import type { ModelRoute } from '../config/types.js';
import type { HandlerFactory } from './types.js';

/** What an entry says of the model's lifecycle, as of `now`: only the fields the model declares. */
function lifecycleOf(routes: readonly ModelRoute[], now: number) {
  const { aliases, deprecatedAt, retiresAt, replacement } = routes[0].model;
  return {
    ...(aliases?.length ? { aliases } : {}),
    ...(deprecatedAt ? { deprecated_at: deprecatedAt } : {}),
    ...(retiresAt ? { retires_at: retiresAt, retired: routes.every((r) => isRetired(r.model, now)) } : {}),
    ...(replacement ? { replacement } : {}),
  };
}

const create: HandlerFactory = ({ services }) => {
  const created = Math.floor(Date.now() / 1000);
  const entries = [...services.config.models.entries()].map(([id, routes]) => ({ id, routes, kind: routes[0].model.kind }));
  return async (req) => {
    const now = services.now();
    const data = entries
      .filter((m) => hasScope(req.auth!, scopeForKind[m.kind]))
      .map(({ id, routes, kind }) => ({ id, object: 'model' as const, created, owned_by: routes[0].channel.id, kind, available: routes.some((r) => !r.channel.disabledReason), ...lifecycleOf(routes, now) }));
    return { object: 'list', data };
  };
};

export default create;
