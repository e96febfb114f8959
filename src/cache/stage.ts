// The response cache as a stage of the pipeline: a ticket for each call whose route says `cache:` (docs/caching.md),
// nothing for any other call. The ticket's key is the workspace (unless the operator shares entries), the dialect and
// the canonical body; a request whose answer may differ from call to call passes as a bypass unless the route allows it.
import type { CacheConfig, RouteCachePolicy } from '../config/cache.js';
import type { ModelRoute } from '../config/types.js';
import type { Call } from '../pipeline/call.js';
import type { CacheTicket, ResponseCacheStage } from '../pipeline/cache-stage.js';
import { clientControl, type ClientControl } from './control.js';
import { cacheKey, canonicalBody, samples } from './key.js';
import { replays } from './replay.js';
import { CacheStats } from './stats.js';
import type { ResponseStore } from './store.js';
import { Ticket } from './ticket.js';

/** The dialects whose answers are cached: the chat dialects and the relayed JSON families (embeddings, moderations, rerank). */
const CACHED_DIALECTS: ReadonlySet<string> = new Set(['openai-chat', 'anthropic-messages', 'openai-responses', 'relay']);

export class ResponseCache implements ResponseCacheStage {
  readonly stats = new CacheStats();

  constructor(
    readonly store: ResponseStore,
    readonly config: CacheConfig,
  ) {}

  ticket(call: Call, routes: readonly ModelRoute[]): CacheTicket | undefined {
    // A call that is not routed costs a property read; a routed one, a lookup of the route it named.
    const via = routes[0]?.via;
    if (via === undefined) return undefined;
    const model = call.body.model;
    const node = via.route.id === model ? via.route : typeof model === 'string' ? call.config.routes.get(model) : undefined;
    const policy = node?.cache;
    if (!policy || !CACHED_DIALECTS.has(call.dialect)) return undefined;
    const control = clientControl(call.headers);
    return new Ticket(this, policy, control, this.keyOf(call, policy, control));
  }

  /** The store key of a request that may be cached; undefined for one that may not (a bypass). */
  private keyOf(call: Call, policy: RouteCachePolicy, control: ClientControl): string | undefined {
    // An answer that gets back what a guardrail redacted from this request would give another request its values.
    if (control.noStore || call.personalAnswer) return undefined;
    // A form's files are not in the body: a multipart request is never keyed.
    if (String(call.headers['content-type'] ?? '').startsWith('multipart/')) return undefined;
    const canonical = canonicalBody(call.body);
    if (!canonical) return undefined;
    if (replays(call.dialect) && samples(call.body) && !policy.allowSampled) return undefined;
    if (canonical.toolResults && !policy.allowToolResults) return undefined;
    if (canonical.imageUrls && !policy.allowImageUrls) return undefined;
    if (canonical.conversationState && !policy.allowConversationState) return undefined;
    const scope = this.config.sharedAcrossWorkspaces ? '*' : call.auth.workspaceId;
    return cacheKey(this.config.namespace, scope, call.dialect, canonical.text);
  }
}
