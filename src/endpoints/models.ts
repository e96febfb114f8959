// GET /v1/models: the models this key may use, in the shape the openai SDK's models.list() reads; it follows reloads.
import { hasScope } from '../auth/authenticate.js';
import { scopeForKind } from '../auth/scopes.js';
import type { LoadedConfig } from '../compile/loaded-config.js';
import type { HandlerFactory } from './types.js';

interface ListedModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  kind: keyof typeof scopeForKind;
  available: boolean;
}

/** Every model of one config snapshot, built once per snapshot; `created` is when the gateway started. */
const listings = new WeakMap<LoadedConfig, ListedModel[]>();

function listing(config: LoadedConfig, created: number): ListedModel[] {
  let all = listings.get(config);
  if (all) return all;
  all = [...config.models.entries()].map(([id, routes]) => ({
    id,
    object: 'model' as const,
    created,
    owned_by: routes[0].channel.id,
    kind: routes[0].model.kind,
    available: routes.some((r) => !r.channel.disabledReason),
  }));
  listings.set(config, all);
  return all;
}

const create: HandlerFactory = ({ services }) => {
  const created = Math.floor(Date.now() / 1000);
  return async (req) => ({ object: 'list', data: listing(services.config, created).filter((m) => hasScope(req.auth!, scopeForKind[m.kind])) });
};

export default create;
