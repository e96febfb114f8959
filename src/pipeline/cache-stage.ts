// The response cache as the pipeline sees it (src/cache/ builds it; the services carry it beside the pipeline's
// dependencies, as tracing is, since its type names the Call): a ticket for a call whose route caches, undefined at the
// cost of a property read for every other call. The ticket answers the call from the store (a hit), or else watches the
// answer go out (the call's answerTap) and keeps it.
import type { ModelRoute } from '../config/types.js';
import type { Call } from './call.js';

export interface ResponseCacheStage {
  ticket(call: Call, routes: readonly ModelRoute[]): CacheTicket | undefined;
}

export interface CacheTicket {
  /**
   * True when the call was answered from the store (and its hit charged); else the call goes on, its answer watched. A
   * plain boolean when nothing had to be waited for (the memory store's miss costs no turn of the event loop).
   */
  serve(call: Call): boolean | Promise<boolean>;
}

/** The services' response cache, when they carry one. */
export const responseCacheOf = (call: Call) => (call.services as { responseCache?: ResponseCacheStage }).responseCache;
