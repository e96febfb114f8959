// The response cache as a stage of the pipeline: a ticket for each call whose route says `cache:` (docs/caching.md),
// nothing for any other call. The ticket's key is the workspace (unless the operator shares entries), the dialect and
// the canonical body; a request whose answer may differ from call to call passes as a bypass unless the route allows it.
import { routeCachePolicy, type CacheConfig, type CacheLimits, type RouteCachePolicy, type RouteCacheSchema } from '../config/cache.js';
import type { ModelRoute } from '../config/types.js';
import type { Call } from '../pipeline/call.js';
import type { CacheTicket, ResponseCacheStage } from '../pipeline/cache-stage.js';
import { clientControl, type ClientControl } from './control.js';
import { cacheKey, canonicalBody, samples } from './key.js';
import { replays } from './replay.js';
import { SemanticIndex } from './semantic.js';
import { SharedVectors } from './shared-vectors.js';
import { CacheStats } from './stats.js';
import type { ResponseStore } from './store.js';
import { Ticket } from './ticket.js';

/** The dialects whose answers are cached: the chat dialects and the relayed JSON families (embeddings, moderations, rerank). */
const CACHED_DIALECTS: ReadonlySet<string> = new Set(['openai-chat', 'anthropic-messages', 'openai-responses', 'relay']);

/** A model's own `cache:` (schemas/model.schema.json), compiled once per model object (a reload makes new ones). */
const modelPolicies = new WeakMap<RouteCacheSchema, RouteCachePolicy>();
function modelPolicy(schema: RouteCacheSchema): RouteCachePolicy {
  let policy = modelPolicies.get(schema);
  if (!policy) modelPolicies.set(schema, (policy = routeCachePolicy(schema)));
  return policy;
}

/** Whether a families list (the route's, the workspace's or key's) leaves out this call's endpoint family. */
const leavesOut = (families: ReadonlySet<string> | undefined, call: Call) => families !== undefined && !families.has(call.operation ?? '');
/** Whether the key or workspace turned the cache off for this call: all of it, or its endpoint family (a bypass). */
const refuses = (limits: CacheLimits, call: Call) => limits.off || leavesOut(limits.families, call);

export class ResponseCache implements ResponseCacheStage {
  readonly stats = new CacheStats();
  /** The semantic cache's vectors (routes with `cache.semantic`), this process's. */
  readonly semantic = new SemanticIndex();
  /** On Redis: the vectors every process keeps, shared through it (absent for the memory store). */
  readonly sharedVectors?: SharedVectors;

  constructor(
    readonly store: ResponseStore,
    readonly config: CacheConfig,
  ) {
    const redis = store.redisCommands();
    if (redis && store.guard) this.sharedVectors = new SharedVectors(redis, config.namespace, store.guard);
  }

  ticket(call: Call, routes: readonly ModelRoute[]): CacheTicket | undefined {
    // A call whose model says no cache: and that is not routed costs two property reads; a routed one, a lookup of the
    // route it named.
    const first = routes[0];
    if (first === undefined) return undefined;
    const via = first.via;
    let policy: RouteCachePolicy | undefined;
    let owner: string;
    if (via === undefined) {
      if (first.model.cache === undefined) return undefined;
      policy = modelPolicy(first.model.cache);
      owner = first.model.id;
    } else {
      const model = call.body.model;
      const node = via.route.id === model ? via.route : typeof model === 'string' ? call.config.routes.get(model) : undefined;
      policy = node?.cache;
      owner = node?.id ?? '';
    }
    if (!policy || !CACHED_DIALECTS.has(call.dialect)) return undefined;
    const control = clientControl(call.headers);
    const scope = this.config.sharedAcrossWorkspaces ? '*' : call.auth.workspaceId;
    const limits = call.auth.cache;
    const refused = (limits !== undefined && refuses(limits, call)) || leavesOut(policy.families, call);
    const key = refused ? undefined : this.keyOf(call, policy, control, scope);
    return new Ticket(this, policy, control, key, owner, limits);
  }

  /** The store key of a request that may be cached; undefined for one that may not (a bypass). */
  private keyOf(call: Call, policy: RouteCachePolicy, control: ClientControl, scope: string): string | undefined {
    // An answer that gets back what a guardrail redacted from this request would give another request its values.
    if (control.noStore || call.personalAnswer) return undefined;
    // A form's files are not in the body: a multipart request is never keyed.
    if (String(call.headers['content-type'] ?? '').startsWith('multipart/')) return undefined;
    // A sampled chat request is a bypass before its body is walked.
    if (!policy.allowSampled && replays(call.dialect) && samples(call.body)) return undefined;
    const canonical = canonicalBody(call.body);
    if (!canonical) return undefined;
    if (canonical.toolResults && !policy.allowToolResults) return undefined;
    if (canonical.imageUrls && !policy.allowImageUrls) return undefined;
    if (canonical.conversationState && !policy.allowConversationState) return undefined;
    return cacheKey(this.config.namespace, scope, call.dialect, canonical.text, this.store.memory !== undefined);
  }
}
