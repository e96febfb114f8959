// GET /v1/models: the models this key may use, in the shape the openai SDK's models.list() reads; it follows reloads.
import { hasScope } from '../auth/authenticate.js';
import type { LoadedConfig } from '../compile/loaded-config.js';
import { modelKinds } from '../engine/models.js';
import type { HandlerFactory } from './types.js';

interface ListedModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  kind: string;
  available: boolean;
  /** The scope the endpoints serving its kind need (null: any key). */
  scope: string | null;
}

/** Every model of one config snapshot, built once per snapshot; `created` is when the gateway started. */
const listings = new WeakMap<LoadedConfig, ListedModel[]>();

function listing(config: LoadedConfig, created: number): ListedModel[] {
  let all = listings.get(config);
  if (all) return all;
  const kinds = modelKinds(config.endpoints);
  all = [...config.models.entries()].map(([id, routes]) => ({
    id,
    object: 'model' as const,
    created,
    owned_by: routes[0].channel.id,
    kind: routes[0].model.kind,
    available: routes.some((r) => !r.channel.disabledReason),
    scope: kinds.get(routes[0].model.kind)?.scope ?? null,
  }));
  listings.set(config, all);
  return all;
}

const create: HandlerFactory = ({ services }) => {
  const created = Math.floor(Date.now() / 1000);
  return async (req) => ({
    object: 'list',
    data: listing(services.config, created)
      .filter((m) => !m.scope || hasScope(req.auth!, m.scope))
      .map(({ scope: _scope, ...model }) => model),
  });
};

export default create;
