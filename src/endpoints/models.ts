// GET /v1/models: the models this key may use, in the shape the openai SDK's models.list() reads; it follows reloads.
// One entry per model, with the other ids it answers to (`aliases`) and its lifecycle (`deprecated_at`, `retires_at`,
// `replacement`, and `retired` as of the request). Routes (routes/) are listed under their public ids.
import { hasScope } from '../auth/authenticate.js';
import type { LoadedConfig } from '../engine/loaded-config.js';
import { isRetired } from '../config/cross-check-models.js';
import type { ModelRoute } from '../config/types.js';
import { modelKinds } from '../engine/models.js';
import type { HandlerFactory } from './types.js';

interface ListedModel {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
  kind: string;
  available: boolean;
  aliases?: string[];
  deprecated_at?: string;
  retires_at?: string;
  replacement?: string;
  /** A route's strategy and the targets (channel/model) it may reach. */
  route?: { strategy: string; targets: string[] };
}

/**
 * An entry, the scope the endpoints serving its kind need (the catalogue's; null: any key) and, for a model with a
 * retirement day, its routes (whether it is retired is read at each request).
 */
type Listing = { entry: ListedModel; scope: string | null; dated?: readonly ModelRoute[] }[];

/** Every model of one config snapshot, built once per snapshot; `created` is when the gateway started. */
const listings = new WeakMap<LoadedConfig, Listing>();

function listing(config: LoadedConfig, created: number): Listing {
  let all = listings.get(config);
  if (all) return all;
  const kinds = modelKinds(config.endpoints);
  all = [...config.models.entries()].map(([id, routes]) => {
    const { kind, aliases, deprecatedAt, retiresAt, replacement } = routes[0].model;
    const entry: ListedModel = { id, object: 'model', created, owned_by: routes[0].channel.id, kind, available: routes.some((r) => !r.channel.disabledReason) };
    if (aliases?.length) entry.aliases = aliases;
    if (deprecatedAt) entry.deprecated_at = deprecatedAt;
    if (retiresAt) entry.retires_at = retiresAt;
    if (replacement) entry.replacement = replacement;
    return { entry, scope: kinds.get(kind)?.scope ?? null, dated: retiresAt ? routes : undefined };
  });
  // A route is listed under its public id, owned by the gateway, with the targets it may reach.
  for (const node of config.routes.values()) {
    const entry: ListedModel = { id: node.id, object: 'model', created, owned_by: 'gateway', kind: node.kind, available: node.reachable.some((r) => !r.channel.disabledReason), route: { strategy: node.strategy, targets: node.reachable.map((r) => r.via!.target) } };
    all.push({ entry, scope: kinds.get(node.kind)?.scope ?? null });
  }
  listings.set(config, all);
  return all;
}

const create: HandlerFactory = ({ services }) => {
  const created = Math.floor(Date.now() / 1000);
  return async (req) => {
    const now = services.now();
    const data = listing(services.config, created)
      .filter(({ scope }) => !scope || hasScope(req.auth!, scope))
      .map(({ entry, dated }) => (dated ? { ...entry, retired: dated.every((r) => isRetired(r.model, now)) } : entry));
    return { object: 'list', data };
  };
};

export default create;
