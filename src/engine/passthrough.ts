// What every same-dialect pass-through shares: the upstream model id, and upstream JSON that must be an object.
import type { TranslateContext } from './translator.js';
import { GatewayError } from '../errors.js';

export const upstreamModelOf = (ctx: TranslateContext) => ctx.route.model.upstream ?? ctx.route.model.id;

/** Parsed upstream JSON that must be an object; anything else is the upstream's fault. */
export function jsonObject(value: unknown, ctx: TranslateContext): Record<string, unknown> {
  if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  throw new GatewayError('upstream_malformed', 502, 'upstream_error', `channel "${ctx.route.channel.id}" sent a malformed answer: an event is not a JSON object`);
}
