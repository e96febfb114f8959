// A hit: the cached answer charged at the route's hitPrice as a ledger row of its own kind (cache_hit), reserved first
// so a key whose cap is spent is refused even where the hit is free, then sent as JSON or replayed as an event stream.
import { renderCost } from '../billing/cost.js';
import type { RouteCachePolicy } from '../config/cache.js';
import type { Call } from '../pipeline/call.js';
import { answerBeforeCommit } from '../pipeline/settle.js';
import { replayEvents, replays, restampStream, withHitCost } from './replay.js';
import type { CacheEntry } from './store.js';

/** The ledger's kind for a hit: usage reports tell hits from upstream calls by it. */
export const CACHE_HIT_KIND = 'cache_hit';

/** The answer a hit sends: the JSON document, or the event stream's text; undefined when the entry has no form for this request. */
export function hitAnswer(call: Call, entry: CacheEntry, streamOptions: string): { json?: string; sse?: string } | undefined {
  if (call.body.stream !== true) return entry.json === undefined ? undefined : { json: entry.json };
  if (entry.sse !== undefined && entry.sseOptions === streamOptions) return { sse: entry.sse };
  if (entry.json === undefined) return undefined;
  // A stream made from the JSON answer: only dialects whose streams the cache can make (else a miss).
  return replays(call.dialect) ? { json: entry.json } : undefined;
}

/** What a hit costs: the route's fraction of what the answer cost when fetched (0 when free). */
export const hitCostMicros = (policy: RouteCachePolicy, entry: CacheEntry) => Math.round(entry.costMicros * policy.hitFraction);

/** Charges the hit and sends it; throws the cap's 402 before anything is sent. */
export async function answerHit(call: Call, policy: RouteCachePolicy, entry: CacheEntry, form: { json?: string; sse?: string }, ageSeconds: number): Promise<number> {
  const costMicros = hitCostMicros(policy, entry);
  // The row's price says what the hit saved (the original cost less its own): usage reports sum it as `cache_saved`.
  const price = { currency: entry.currency, savedMicros: Math.max(0, entry.costMicros - costMicros) };
  const route = { model: { id: entry.model, kind: CACHE_HIT_KIND, price }, channel: { id: entry.channel } };
  // At least one micro-unit reserved: a cap already spent refuses it, as it would refuse the call upstream; nothing
  // when the route serves free hits past a spent cap.
  const estimateMicros = policy.hitsPastCap && costMicros === 0 ? 0 : Math.max(1, costMicros);
  const charge = await call.services.meter.begin({ auth: call.auth, route, requestId: call.requestId, estimateMicros, observer: call.settlements });
  try {
    const tokens = policy.hitTokensReported ? { inputTokens: entry.inputTokens, outputTokens: entry.outputTokens, cachedInputTokens: entry.cachedInputTokens } : {};
    const settling = charge.settle({ costMicros, ...tokens });
    // As for any answer: sent while a batching store commits (the reservation holds the cap), else once committed.
    if (!answerBeforeCommit(call)) await settling;
    await sendHit(call, entry, form, ageSeconds, costMicros);
    await settling.catch((err: unknown) => call.log.error({ err }, 'a cache hit was sent but its charge could not be recorded'));
  } finally {
    await charge.close();
  }
  return costMicros;
}

async function sendHit(call: Call, entry: CacheEntry, form: { json?: string; sse?: string }, ageSeconds: number, costMicros: number): Promise<void> {
  call.header('x-cache', 'hit');
  call.header('age', String(ageSeconds));
  const cost = renderCost({ micros: costMicros, currency: entry.currency });
  if (form.sse !== undefined || call.body.stream === true) {
    const text = form.sse !== undefined ? restampStream(form.sse, cost) : replayEvents(call.dialect, withHitCost(JSON.parse(form.json!), cost), call.body, cost)!;
    const res = call.openStream({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive', 'x-request-id': call.requestId }, false);
    res.end(text);
  } else {
    // Output guardrails that call out judge a hit as they judge an answer fetched (the rest run in respond).
    const answer = withHitCost(JSON.parse(form.json!), cost);
    call.respond(call.checkAnswer ? await call.checkAnswer(answer) : answer);
  }
}
