// Worst-case cost of a request before it is sent, reserved against spending caps.
import type { ModelRoute } from '../config/types.js';
import { tokenCostMicros } from './cost.js';

/** Bytes per token assumed when estimating input size: low, so the estimate errs high. */
const BYTES_PER_TOKEN = 3;
const DEFAULT_MAX_TOKENS = 4096;

export function estimateInputTokens(value: unknown): number {
  return Math.ceil(Buffer.byteLength(JSON.stringify(value ?? '')) / BYTES_PER_TOKEN);
}

export function estimateChatMicros(route: ModelRoute, body: Record<string, unknown>): number {
  const maxTokens = Number(body.max_completion_tokens ?? body.max_tokens ?? DEFAULT_MAX_TOKENS);
  const inputTokens = estimateInputTokens({ system: body.system, messages: body.messages, tools: body.tools });
  return tokenCostMicros(route.model.price, { inputTokens, outputTokens: Number.isFinite(maxTokens) ? maxTokens : DEFAULT_MAX_TOKENS });
}
