// What usage an honest upstream can report: beyond what a model's declared limits allow it is impossible, charged the
// reservation and logged, never booked as overage (DESIGN.md section 5, Billing). A model without limits is bounded by
// billing.defaultLimits widened to the request's size. One place for every path: the usage reader of chat, Messages,
// Responses, images and evaluate, and the settlement of a task.
import type { ModelLimits, ModelRoute } from '../config/types.js';

/**
 * Why `tokens` are impossible for a model with `limits` answering `choices` times, or undefined: input and output together
 * may not pass contextTokens + maxOutputTokens per choice. `declared`: the limits are the model's own (else the default
 * bound of a model without limits, named so in the reason).
 */
export function impossibleTokens(limits: ModelLimits | undefined, tokens: { inputTokens: number; outputTokens: number }, choices = 1, declared = true): string | undefined {
  if (!limits) return undefined;
  const most = (limits.contextTokens + limits.maxOutputTokens) * choices;
  const total = tokens.inputTokens + tokens.outputTokens;
  if (total <= most) return undefined;
  return `usage reports ${total} tokens, more than ${declared ? "the model's limits" : 'billing.defaultLimits (the model declares no limits)'} allow (${most})`;
}

/** What the request itself makes possible on a model without limits: its bytes (no tokenizer makes more tokens), its output bound. */
export interface RequestSize {
  bytes?: number;
  outputTokens?: number;
}

/**
 * The bound of a model that declares no limits: `defaults` (billing.defaultLimits), widened to the request's own size
 * (a model with a larger window honestly reads a prompt of more bytes, and writes the output the client asked for).
 */
export function defaultBound(defaults: ModelLimits, request: RequestSize): ModelLimits {
  return {
    contextTokens: Math.max(defaults.contextTokens, request.bytes ?? 0),
    maxOutputTokens: Math.max(defaults.maxOutputTokens, request.outputTokens ?? 0),
  };
}

/**
 * Why a task's billed units are impossible, or undefined: output tokens past the model's limits.maxOutputTokens, units
 * past the most its family's bill allows (`mostUnits`: the model's declared limit, which requests are held to, or a constant).
 */
export function impossibleTaskUnits(route: ModelRoute, units: { count: number; unit: string }, mostUnits: number): string | undefined {
  const { count, unit } = units;
  const most = unit === 'tokens' ? route.model.limits?.maxOutputTokens : mostUnits;
  if (most === undefined || count <= most) return undefined;
  return `usage reports ${count} ${unit}, more than the model's limits allow (${most})`;
}

/**
 * Why a relayed call's tokens are impossible, or undefined: input past the request's bytes (no tokenizer makes more tokens
 * than bytes, and the body's quotes and commas cover the special tokens around each input), output past the model's
 * maxOutputTokens, or `defaults` for a model that declares no limits (a batch of embeddings may pass one context window,
 * its bytes may not). Bounds every kind the relay serves, limits or none.
 */
export function impossibleRelayTokens(model: ModelRoute['model'], defaults: ModelLimits, bodyBytes: number, tokens: { inputTokens: number; outputTokens: number }): string | undefined {
  if (tokens.inputTokens > bodyBytes) return `usage reports ${tokens.inputTokens} input tokens, more than the request's ${bodyBytes} bytes can hold`;
  const most = (model.limits ?? defaults).maxOutputTokens;
  if (tokens.outputTokens > most) return `usage reports ${tokens.outputTokens} output tokens, more than the model's limits allow (${most})`;
  return undefined;
}
