// Typed views of the response cache's config: config.yaml `cache:` (the store and its bounds, schemas/config/cache.json)
// and a route's `cache:` (schemas/route.schema.json), compiled once at load into the policy a request reads.
import type { CacheConfig, RouteRoute } from './generated/config-types.js';

export type { CacheConfig };

/** What a route's `cache:` says, as a request reads it: no strings compared per request. */
export interface RouteCachePolicy {
  ttlSeconds: number;
  /** The fraction of the original answer's cost a hit is charged (0: free). */
  hitFraction: number;
  /** True (free hits only): a hit is served past a spent cap, reserving nothing. */
  hitsPastCap: boolean;
  /** True: a hit's ledger row carries the original answer's token counts; false: zero. */
  hitTokensReported: boolean;
  /** Requests whose answer may differ from call to call, cached anyway because the route says so. */
  allowSampled: boolean;
  allowToolResults: boolean;
  allowImageUrls: boolean;
  allowConversationState: boolean;
  /** The endpoint families (catalogue `pipeline.operation`) cached; absent: all. */
  families?: ReadonlySet<string>;
  /** The largest answer stored, when the route sets one below config.yaml's. */
  maxEntryBytes?: number;
  /** The semantic lookup this route adds to the exact one, if it does. */
  semantic?: SemanticPolicy;
}

/** A route's `cache.semantic`, defaults filled in: the embeddings model, the least similarity and the vectors kept. */
export interface SemanticPolicy {
  model: string;
  threshold: number;
  maxEntries: number;
}

export type RouteCacheSchema = NonNullable<RouteRoute['cache']>;

export function routeCachePolicy(schema: RouteCacheSchema): RouteCachePolicy {
  const allow = new Set(schema.allow ?? []);
  return Object.freeze({
    ttlSeconds: schema.ttlSeconds,
    hitFraction: schema.hitPrice === 'free' || schema.hitPrice === undefined ? 0 : schema.hitPrice,
    hitsPastCap: schema.hitsPastCap === true,
    hitTokensReported: schema.hitTokens === 'reported',
    allowSampled: allow.has('sampled'),
    allowToolResults: allow.has('tool-results'),
    allowImageUrls: allow.has('image-urls'),
    allowConversationState: allow.has('conversation-state'),
    ...(schema.families ? { families: new Set(schema.families) } : {}),
    ...(schema.maxEntryBytes !== undefined ? { maxEntryBytes: schema.maxEntryBytes } : {}),
    ...(schema.semantic ? { semantic: Object.freeze({ model: schema.semantic.model, threshold: schema.semantic.threshold ?? 0.95, maxEntries: schema.semantic.maxEntries ?? 10_000 }) } : {}),
  });
}

/** config.yaml `cache:`, defaults filled in by its schema. */
export const cacheConfig = (config: { gateway: { cache?: unknown } }) => config.gateway.cache as CacheConfig;

/**
 * How a workspace or a key narrows the operator's cache (admin API `PUT .../cache`, stored as JSON on its row): off, a
 * shorter life (also the oldest answer it is served), only some endpoint families (the catalogue's `pipeline.operation`
 * names: chat, responses, messages, embeddings, ...), smaller entries. Never wider than the route's own `cache:`.
 */
export interface CacheSettings {
  enabled: boolean;
  ttlSeconds: number | null;
  families: string[] | null;
  maxEntryBytes: number | null;
}

/** What a request's key and workspace together allow the cache, as authentication hands it on; absent when neither narrows it. */
export interface CacheLimits {
  readonly off: boolean;
  readonly ttlSeconds?: number;
  readonly families?: ReadonlySet<string>;
  readonly maxEntryBytes?: number;
}

export const CACHE_AS_SET: CacheSettings = Object.freeze({ enabled: true, ttlSeconds: null, families: null, maxEntryBytes: null });

/** A row's stored settings (null or absent: as the operator set it). */
export function storedCacheSettings(text: string | null | undefined): CacheSettings {
  if (!text) return CACHE_AS_SET;
  const stored = JSON.parse(text) as Partial<CacheSettings>;
  return { enabled: stored.enabled !== false, ttlSeconds: stored.ttlSeconds ?? null, families: stored.families ?? null, maxEntryBytes: stored.maxEntryBytes ?? null };
}

const lower = (a: number | null, b: number | undefined) => (a === null ? b : b === undefined ? a : Math.min(a, b));

/** The limits of a workspace's and a key's settings together: each narrows what the other left (off wins, the shorter life, the families both name). */
export function cacheLimits(workspace: string | null | undefined, key: string | null | undefined): CacheLimits | undefined {
  if (!workspace && !key) return undefined;
  let limits: { off: boolean; ttlSeconds?: number; families?: ReadonlySet<string>; maxEntryBytes?: number } = { off: false };
  for (const settings of [storedCacheSettings(workspace), storedCacheSettings(key)]) {
    const families = settings.families === null ? limits.families : new Set(settings.families.filter((f) => !limits.families || limits.families.has(f)));
    const ttlSeconds = lower(settings.ttlSeconds, limits.ttlSeconds);
    const maxEntryBytes = lower(settings.maxEntryBytes, limits.maxEntryBytes);
    limits = { off: limits.off || !settings.enabled, ...(ttlSeconds !== undefined ? { ttlSeconds } : {}), ...(families ? { families } : {}), ...(maxEntryBytes !== undefined ? { maxEntryBytes } : {}) };
  }
  return Object.freeze(limits);
}
