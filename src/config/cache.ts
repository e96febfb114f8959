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
    ...(schema.semantic ? { semantic: Object.freeze({ model: schema.semantic.model, threshold: schema.semantic.threshold ?? 0.95, maxEntries: schema.semantic.maxEntries ?? 10_000 }) } : {}),
  });
}

/** config.yaml `cache:`, defaults filled in by its schema. */
export const cacheConfig = (config: { gateway: { cache?: unknown } }) => config.gateway.cache as CacheConfig;
