// GET /v1/models: the models this key may use, in the shape the openai SDK's models.list() reads.
import { hasScope } from '../auth/authenticate.js';
import { modelKinds } from '../engine/models.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => {
  const kinds = modelKinds(services.config.endpoints);
  const created = Math.floor(Date.now() / 1000);
  const all = [...services.config.models.entries()].map(([id, routes]) => ({
    id,
    object: 'model' as const,
    created,
    owned_by: routes[0].channel.id,
    kind: routes[0].model.kind,
    available: routes.some((r) => !r.channel.disabledReason),
  }));
  return async (req) => ({ object: 'list', data: all.filter((m) => {
      const scope = kinds.get(m.kind)?.scope;
      return !scope || hasScope(req.auth!, scope);
    }) });
};

export default create;
