// Resolves a client's model id to the routes that may serve it on a given endpoint.
import type { EndpointConfig, ModelKind, ModelRoute } from '../config/types.js';
import type { LoadedConfig } from '../compile/loaded-config.js';
import { ChannelUnavailableError, ValidationError, clientValue } from '../errors.js';

/** What the catalogue says of a kind of model: the scope its endpoints need, and where they are. */
export interface KindEndpoints {
  scope: string | null;
  /** `POST /api/v1/...` for each endpoint that serves the kind, in catalogue order. */
  routes: string[];
}

const kindsCache = new WeakMap<readonly EndpointConfig[], ReadonlyMap<string, KindEndpoints>>();

/** Every model kind the catalogue's endpoints declare (`modelKind`), with its scope (the first endpoint's) and routes. */
export function modelKinds(endpoints: readonly EndpointConfig[]): ReadonlyMap<string, KindEndpoints> {
  let kinds = kindsCache.get(endpoints);
  if (!kinds) {
    const made = new Map<string, KindEndpoints>();
    for (const endpoint of endpoints) {
      if (!endpoint.modelKind) continue;
      const kind = made.get(endpoint.modelKind) ?? { scope: endpoint.scope ?? null, routes: [] };
      const path = endpoint.aliases !== false && endpoint.path.startsWith('/v1/') ? `/api${endpoint.path}` : endpoint.path;
      kind.routes.push(`${endpoint.method[0]} ${path}`);
      made.set(endpoint.modelKind, kind);
    }
    kinds = made;
    kindsCache.set(endpoints, kinds);
  }
  return kinds;
}

const kindWords = (kind: string) => `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} model`;

/** Enabled routes for `modelId` of `kind`, best first; unknown, wrong-kind and all-disabled models are refused. */
export function resolveModel(config: LoadedConfig, modelId: unknown, kind: ModelKind): ModelRoute[] {
  if (typeof modelId !== 'string' || modelId === '') throw new ValidationError('"model" is required', 'model');
  const routes = config.models.get(modelId);
  if (!routes) throw new ValidationError(`unknown model ${clientValue(modelId)}`, 'model', 'model_not_found');
  const actual = routes[0].model.kind;
  if (actual !== kind) {
    throw new ValidationError(
      `model ${clientValue(modelId)} is ${kindWords(actual)}, not ${kindWords(kind)}; send it to ${modelKinds(config.endpoints).get(actual)?.routes.join(' or ') ?? 'no endpoint'}`,
      'model',
      actual === 'evaluation' ? 'evaluation_model_not_supported' : 'wrong_model_kind',
    );
  }
  return usableRoutes(routes);
}

/** The routes whose channel is enabled (the same array when all are: callers only read it). */
function usableRoutes(routes: readonly ModelRoute[]): ModelRoute[] {
  let disabled = 0;
  for (const route of routes) if (route.channel.disabledReason) disabled++;
  if (disabled === routes.length) throw new ChannelUnavailableError(routes[0].channel.disabledReason!);
  return disabled ? routes.filter((r) => !r.channel.disabledReason) : (routes as ModelRoute[]);
}
