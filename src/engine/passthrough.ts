// What every same-dialect pass-through shares: the upstream model id, upstream JSON that must be an object, scrubbed error events.
import type { TranslateContext } from './translator.js';
import { GatewayError } from '../errors.js';
import { scrubUpstreamText } from './upstream-text.js';

export const upstreamModelOf = (ctx: TranslateContext) => ctx.route.model.upstream ?? ctx.route.model.id;

/** `{cost}` of the usage reported so far, to spread into an answer; nothing when no usage is known. */
export function costOf(ctx: TranslateContext): { cost?: { amount: number; currency: string } } {
  const usage = ctx.usage();
  return usage ? { cost: ctx.costOf(usage) } : {};
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
  const message = typeof error.message === 'string' ? scrubUpstreamText(error.message, { upstreamModel: upstreamModelOf(ctx), clientModel: ctx.clientModel, secrets: [ctx.route.channel.credentialValue] }) : 'upstream error';
  return { ...data, error: { ...(typeof error.type === 'string' ? { type: error.type.slice(0, 64) } : {}), message } };
}
