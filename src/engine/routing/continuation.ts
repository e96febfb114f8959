// The request that continues a broken stream on the next target, in the client's dialect (docs/routing.md, "Stream
// failover"): the original request, plus the text the client has been sent as a final assistant turn. `prefill` when
// the target continues a final assistant turn (an Anthropic prefill; an OpenAI-chat model marked `prefill`, flagged
// `prefix: true`), else `instruction`: the same turn followed by a user turn asking to go on where it stopped. The
// output bound is what is left of the client's.
import type { ModelRoute } from '../../config/types.js';

export type ContinuationMode = 'prefill' | 'instruction';

/** What a model that cannot take a prefill is asked, after the text it already wrote. */
export const CONTINUE_INSTRUCTION =
  'Your previous answer was cut off. Continue it exactly where it stopped: do not repeat anything, do not add a preamble or any remark, write only the rest.';

/** Why a request's stream is never continued, whatever breaks: structured output, several choices. */
export function notContinuable(dialect: string, body: Record<string, unknown>): string | undefined {
  const format = dialect === 'openai-chat' ? (body.response_format as { type?: unknown } | undefined)?.type : (body.text as { format?: { type?: unknown } } | undefined)?.format?.type;
  if (format === 'json_schema' || format === 'json_object') return 'structured output';
  if (body.output_format || (body.output_config as { format?: unknown } | undefined)?.format) return 'structured output';
  if (typeof body.n === 'number' && body.n > 1) return 'several choices';
  return undefined;
}

/** How a pass-through target continues: in the client's own dialect. */
export function passthroughMode(dialect: string, route: ModelRoute, body: Record<string, unknown>): ContinuationMode {
  if (dialect === 'openai-chat') return route.model.prefill ? 'prefill' : 'instruction';
  // The Responses API continues no assistant message of its input: it answers after it.
  if (dialect === 'openai-responses') return 'instruction';
  // Anthropic takes no prefill while the model thinks.
  const thinking = (body.thinking as { type?: unknown } | undefined)?.type;
  return thinking === 'enabled' || thinking === 'adaptive' ? 'instruction' : 'prefill';
}

/** `bound` less what was streamed, at least one token; unchanged when the client set none. */
function remaining(bound: unknown, streamedTokens: number): unknown {
  return typeof bound === 'number' && Number.isFinite(bound) ? Math.max(1, Math.floor(bound) - streamedTokens) : bound;
}

/** Where a dialect's request lists its turns, and what an assistant's text part is. */
const turnsOf = (dialect: string) => (dialect === 'openai-responses' ? { field: 'input', textPart: 'output_text' } : { field: 'messages', textPart: 'text' });

/** The final assistant turn with `text` after what it held (a client's own prefill goes on), as the dialect writes it. */
function assistantTurn(last: Record<string, unknown> | undefined, text: string, prefix: boolean, textPart: string): { replace: boolean; turn: Record<string, unknown> } {
  const flag = prefix ? { prefix: true } : {};
  if (last?.role !== 'assistant') return { replace: false, turn: { role: 'assistant', content: text, ...flag } };
  const content = last.content;
  if (typeof content === 'string') return { replace: true, turn: { ...last, content: content + text, ...flag } };
  if (Array.isArray(content)) return { replace: true, turn: { ...last, content: [...content, { type: textPart, text }], ...flag } };
  return { replace: true, turn: { ...last, content: text, ...flag } };
}

/**
 * The client's request continued after `text` (what the client has been sent), in its dialect. A prefill is sent
 * without trailing whitespace (Anthropic refuses it): `trimmed` says so, and the continuation's first text is trimmed
 * at its start in turn.
 */
export function continuationBody(
  dialect: string,
  body: Record<string, unknown>,
  text: string,
  mode: ContinuationMode,
  streamedTokens: number,
  /** A pass-through OpenAI-chat prefill: the turn is flagged `prefix: true` (a translation flags it itself). */
  flagPrefix = false,
): { body: Record<string, unknown>; trimmed: boolean } {
  const { field, textPart } = turnsOf(dialect);
  const turns = body[field];
  // A Responses input may be one string: the user's turn.
  const messages = Array.isArray(turns) ? [...(turns as Record<string, unknown>[])] : typeof turns === 'string' ? [{ role: 'user', content: turns }] : [];
  const copy: Record<string, unknown> = { ...body };
  for (const bound of ['max_tokens', 'max_completion_tokens', 'max_output_tokens']) if (bound in copy) copy[bound] = remaining(copy[bound], streamedTokens);
  if (!text) return { body: { ...copy, [field]: messages }, trimmed: false };
  const prefill = mode === 'prefill' ? text.trimEnd() : text;
  const trimmed = prefill.length !== text.length;
  if (prefill) {
    const { replace, turn } = assistantTurn(messages.at(-1), prefill, mode === 'prefill' && flagPrefix, textPart);
    if (replace) messages[messages.length - 1] = turn;
    else messages.push(turn);
  }
  if (mode === 'instruction') messages.push({ role: 'user', content: CONTINUE_INSTRUCTION });
  return { body: { ...copy, [field]: messages }, trimmed };
}
