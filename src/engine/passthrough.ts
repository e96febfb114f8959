// What every same-dialect pass-through shares: the upstream model id, upstream JSON that must be an object, scrubbed error events.
import type { TranslateContext } from './translator.js';
import { GatewayError } from '../base/errors.js';
import { secretsOf } from './credentials/secrets.js';
import { scrubUpstreamText } from './upstream-text.js';
import { replaceTopLevel, sendAsText, sourceTextOf } from '../http/json-text.js';

export const upstreamModelOf = (ctx: TranslateContext) => ctx.route.model.upstream ?? ctx.route.model.id;

/**
 * The client's body as the upstream receives it: the model id mapped and `changes` (top-level members) set, nothing
 * else. When the client's JSON text is at hand it is what is sent, with only those members' values replaced, so every
 * other byte (a seed above 2^53, a number's spelling) reaches the upstream as the client wrote it.
 */
export function relayedBody(body: Record<string, unknown>, ctx: TranslateContext, changes?: Record<string, unknown>): Record<string, unknown> {
  return relayedAs(body, upstreamModelOf(ctx), changes);
}

/** `relayedBody` for a given upstream model id. */
export function relayedAs(body: Record<string, unknown>, model: string, changes?: Record<string, unknown>): Record<string, unknown> {
  const document: Record<string, unknown> = { ...body, model, ...changes };
  const text = sourceTextOf(body);
  if (text !== undefined) {
    const values: Record<string, string> = { model: JSON.stringify(model) };
    if (changes) for (const [name, value] of Object.entries(changes)) values[name] = JSON.stringify(value);
    const relayed = model === body.model && !changes ? text : replaceTopLevel(text, values);
    if (relayed !== undefined) sendAsText(document, relayed);
  }
  return document;
}

/**
 * The upstream's answer as the client receives it: the model id named back as the client sent it and the cost added,
 * every other byte of the upstream's JSON text as it came (when the text is at hand).
 */
export function relayedAnswer(body: Record<string, unknown>, ctx: TranslateContext): Record<string, unknown> {
  const { cost } = costOf(ctx);
  const document = cost ? { ...body, model: ctx.clientModel, cost } : { ...body, model: ctx.clientModel };
  const text = sourceTextOf(body);
  if (text !== undefined) {
    // Each changed member's JSON text, spelled directly (this runs on every pass-through answer, before it is written).
    const values: Record<string, string> = cost ? { model: JSON.stringify(ctx.clientModel), cost: JSON.stringify(cost) } : { model: JSON.stringify(ctx.clientModel) };
    const relayed = replaceTopLevel(text, values);
    if (relayed !== undefined) sendAsText(document, relayed);
  }
  return document;
}

/** `{cost}` of the usage reported so far, to spread into an answer; without usage, the reservation it is charged. */
export function costOf(ctx: TranslateContext): { cost?: { amount: number; currency: string } } {
  const usage = ctx.usage();
  if (usage) return { cost: ctx.costOf(usage) };
  const reserved = ctx.reservedCost?.();
  return reserved ? { cost: reserved } : {};
}

/** Parsed upstream JSON that must be an object; anything else is the upstream's fault. */
export function jsonObject(value: unknown, ctx: TranslateContext): Record<string, unknown> {
  if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  throw new GatewayError('upstream_malformed', 502, 'upstream_error', `channel "${ctx.route.channel.id}" sent a malformed answer: an event is not a JSON object`);
}

/**
 * An upstream's error event as the client may see it: its `error.message` scrubbed and bounded like an error answer's
 * (no URLs, credentials or upstream model id), everything else of the error object dropped but its type.
 */
export function scrubbedError(data: Record<string, unknown>, ctx: TranslateContext): Record<string, unknown> {
  const error = (data.error && typeof data.error === 'object' ? data.error : {}) as Record<string, unknown>;
  const message = typeof error.message === 'string' ? scrubUpstreamText(error.message, { upstreamModel: upstreamModelOf(ctx), clientModel: ctx.clientModel, secrets: secretsOf(ctx.route.channel) }) : 'upstream error';
  return { ...data, error: { ...(typeof error.type === 'string' ? { type: error.type.slice(0, 64) } : {}), message } };
}
