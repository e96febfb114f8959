// Provider-side ids an answer hands the workspace (a Responses `id`), recorded so a later request naming one is checked
// against the workspace it was handed to (inputs stage). Only an upstream Responses document counts.
import { recordProviderId, recordResponseItems } from '../store/provider-ids.js';
import type { SseEvent } from '../engine/sse.js';
import type { StreamMapper } from '../engine/translator.js';
import type { Call } from './call.js';

export async function recordResponseId(call: Call, document: unknown): Promise<void> {
  if (call.dialect !== 'openai-responses' || !document || typeof document !== 'object') return;
  const { id, object } = document as { id?: unknown; object?: unknown };
  if (object === 'response' && typeof id === 'string') await recordProviderId(call.services.db, 'response', id, call.auth.workspaceId);
}

/** A translated Responses answer's output items, kept for the workspace so its next request may reference them (unless store: false). */
export async function recordTranslatedItems(call: Call, response: unknown): Promise<void> {
  if (call.dialect !== 'openai-responses' || call.body.store === false) return;
  const output = (response as { output?: unknown } | null)?.output;
  if (!Array.isArray(output)) return;
  // Keeping the items is a courtesy to the next request: failing to keep them never fails this answer.
  await recordResponseItems(call.services.db, call.auth.workspaceId, output).catch((err: unknown) => call.log.warn({ err }, 'keeping the response items failed'));
}

/** Events that end a Responses stream with its whole output. */
const FINAL_EVENTS = new Set(['response.completed', 'response.incomplete']);

/**
 * A translated Responses stream whose final output is kept as the answer's items: recorded before the event that carries
 * them reaches the client (the relay awaits `drain`), so a reference sent as soon as the stream ends resolves.
 */
export function keepingItems(call: Call, mapper: StreamMapper): StreamMapper {
  if (call.dialect !== 'openai-responses' || call.body.store === false) return mapper;
  let pending: Promise<void> | undefined;
  const watch = (events: SseEvent[]) => {
    for (const event of events) {
      if (!FINAL_EVENTS.has(event.event ?? '')) continue;
      const response = (JSON.parse(event.data) as { response?: unknown }).response;
      pending = recordTranslatedItems(call, response);
    }
    return events;
  };
  return {
    push: (event, parse) => watch(mapper.push(event, parse)),
    end: () => watch(mapper.end()),
    fail: (error) => mapper.fail(error),
    streamedOutputTokens: mapper.streamedOutputTokens && (() => mapper.streamedOutputTokens!()),
    drain() {
      const p = pending;
      pending = undefined;
      return p;
    },
  };
}
