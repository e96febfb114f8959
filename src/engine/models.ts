// Resolves a client's model id to the routes that may serve it on a given endpoint.
import type { EndpointConfig, ModelConfig, ModelKind, ModelRoute, RouteNode } from '../config/types.js';
import type { LoadedConfig } from './loaded-config.js';
import { dayStart, isRetired } from '../config/cross-check-models.js';
import { channelNotConfigured, GatewayError, ValidationError, clientValue } from '../base/errors.js';

/** What the catalogue says of a kind of model: the scope its endpoints need, and where they are. */
export interface KindEndpoints {
  scope: string | null;
  /** `POST /api/v1/...` for each endpoint that serves the kind, in catalogue order. */
  routes: string[];
  /** The error code of a model of this kind sent to another kind's endpoint (the catalogue's `wrongKindCode`). */
  wrongKindCode?: string;
  /** OpenTelemetry's `gen_ai.operation.name` for calls to models of this kind (the catalogue's `genAiOperation`). */
  genAiOperation?: string;
}

const kindsCache = new WeakMap<readonly EndpointConfig[], ReadonlyMap<string, KindEndpoints>>();

/** Every model kind the catalogue's endpoints declare (`modelKind`), with its scope (the first endpoint's) and routes. */
export function modelKinds(endpoints: readonly EndpointConfig[]): ReadonlyMap<string, KindEndpoints> {
  let kinds = kindsCache.get(endpoints);
  if (!kinds) {
    const made = new Map<string, KindEndpoints>();
    // A task family's routes that protocols declare (`routes: declared`) count only for a kind no other entry serves.
    const declared = (e: EndpointConfig) => e.pipeline?.task?.routes === 'declared';
    const served = new Set(endpoints.filter((e) => !declared(e)).map((e) => e.modelKind));
    for (const endpoint of endpoints) {
      if (!endpoint.modelKind || (declared(endpoint) && served.has(endpoint.modelKind))) continue;
      const kind = made.get(endpoint.modelKind) ?? { scope: endpoint.scope ?? null, routes: [] };
      const path = endpoint.aliases !== false && endpoint.path.startsWith('/v1/') ? `/api${endpoint.path}` : endpoint.path;
      kind.routes.push(`${endpoint.method[0]} ${path}`);
      kind.wrongKindCode ??= endpoint.wrongKindCode;
      kind.genAiOperation ??= endpoint.genAiOperation;
      made.set(endpoint.modelKind, kind);
    }
    kinds = made;
    kindsCache.set(endpoints, kinds);
  }
  return kinds;
}

const kindWords = (kind: string) => `${/^[aeiou]/.test(kind) ? 'an' : 'a'} ${kind} model`;

/** A model this gateway does not serve (or no longer does): 404 in each dialect, `model_not_found` as OpenAI answers it. */
export class ModelNotFoundError extends GatewayError {
  constructor(message: string) {
    super('model_not_found', 404, 'invalid_request_error', message, { param: 'model', anthropicType: 'not_found_error' });
  }
}

/** The routes of the model `modelId` names, by its id or an alias; undefined when no routed model has it. */
export function routesOf(config: Pick<LoadedConfig, 'models' | 'aliases'>, modelId: string): ModelRoute[] | undefined {
  return config.models.get(modelId) ?? config.models.get(config.aliases.get(modelId) ?? '');
}

const defaultsCache = new WeakMap<ReadonlyMap<string, ModelRoute[]>, ReadonlyMap<string, string>>();

/** The id of the model of `kind` its channel marks `defaultForKind` (check-config allows one a kind), if any. */
export function defaultModelOf(config: Pick<LoadedConfig, 'models'>, kind: ModelKind): string | undefined {
  let defaults = defaultsCache.get(config.models);
  if (!defaults) {
    const made = new Map<string, string>();
    for (const [id, routes] of config.models) if (routes.some((r) => r.model.defaultForKind)) made.set(routes[0].model.kind, id);
    defaults = made;
    defaultsCache.set(config.models, defaults);
  }
  return defaults.get(kind);
}

/**
 * Enabled routes for `modelId` (an id or an alias) of `kind`, best first, as of `now`: unknown models are 404, wrong-kind
 * and all-disabled ones refused; a retired model's routes are skipped, and when none is left it is refused naming its
 * replacement, or (channels.retiredModels: replace) its replacement serves. The clock is read only for a model with a
 * retirement day (a call's injected clock is read once per reservation, as budget periods expect).
 */
export function resolveModel(config: LoadedConfig, modelId: unknown, kind: ModelKind, now: () => number = Date.now, routed?: (node: RouteNode) => ModelRoute[]): ModelRoute[] {
  if (typeof modelId !== 'string' || modelId === '') throw new ValidationError('"model" is required', 'model');
  const routes = routesOf(config, modelId);
  if (!routes) {
    // A route's id is looked up only once no model has it: a config without routes does nothing more per request.
    const node = config.routes.get(modelId);
    if (!node) throw new ModelNotFoundError(`model ${clientValue(modelId)} does not exist or is not served by this gateway (GET /v1/models lists what is)`);
    if (node.kind !== kind) throw wrongKind(config, modelId, node.kind, kind);
    return routed ? routed(node) : node.reachable;
  }
  const actual = routes[0].model.kind;
  if (actual !== kind) throw wrongKind(config, modelId, actual, kind);
  return usableRoutes(liveRoutes(config, modelId, routes, now));
}

function wrongKind(config: LoadedConfig, modelId: string, actual: ModelKind, kind: ModelKind): ValidationError {
  const served = modelKinds(config.endpoints).get(actual);
  return new ValidationError(
    `model ${clientValue(modelId)} is ${kindWords(actual)}, not ${kindWords(kind)}; send it to ${served?.routes.join(' or ') ?? 'no endpoint'}`,
    'model',
    served?.wrongKindCode ?? 'wrong_model_kind',
  );
}


/** The routes not past their retirement day; when none is left, the replacement's (followed at most a few times) or a refusal. */
function liveRoutes(config: LoadedConfig, asked: string, routes: ModelRoute[], now: () => number, depth = 0): ModelRoute[] {
  if (!routes.some((r) => r.model.retiresAt !== undefined)) return routes;
  const today = now();
  const live = routes.filter((r) => !isRetired(r.model, today));
  if (live.length) return live;
  const { id, retiresAt, replacement } = routes[0].model;
  const replacing = replacement !== undefined && config.gateway.channels.retiredModels === 'replace' && depth < 8 ? routesOf(config, replacement) : undefined;
  if (replacing) return liveRoutes(config, asked, replacing, now, depth + 1);
  const named = asked === id ? `model ${clientValue(asked)}` : `model ${clientValue(asked)} (${id})`;
  throw new ModelNotFoundError(`${named} was retired on ${retiresAt}${replacement ? `; use ${clientValue(replacement)} instead` : ''}`);
}

/** The headers an answer for `model` carries: `deprecation` (RFC 9745) and `sunset` (RFC 8594), when its days are known. */
export function lifecycleHeaders(model: ModelConfig): [string, string][] {
  const headers: [string, string][] = [];
  if (model.deprecatedAt) headers.push(['deprecation', `@${Math.floor(dayStart(model.deprecatedAt) / 1000)}`]);
  if (model.retiresAt) headers.push(['sunset', new Date(dayStart(model.retiresAt)).toUTCString()]);
  return headers;
}

/** The routes whose channel is enabled (the same array when all are: callers only read it). */
function usableRoutes(routes: readonly ModelRoute[]): ModelRoute[] {
  let disabled = 0;
  for (const route of routes) if (route.channel.disabledReason) disabled++;
  if (disabled === routes.length) throw channelNotConfigured(routes[0].channel.id, routes[0].channel.disabledReason!);
  return disabled ? routes.filter((r) => !r.channel.disabledReason) : (routes as ModelRoute[]);
}
