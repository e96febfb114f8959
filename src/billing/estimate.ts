// Worst-case cost of a request before it is sent, reserved against spending caps: a true upper bound for an honest upstream.
import type { ModelRoute } from '../config/types.js';
import { tokenCostMicros } from './cost.js';

/** Bytes per token assumed when estimating input size: low, so the estimate errs high. */
const BYTES_PER_TOKEN = 3;
/** Output bound applied when a chat client sets none, so every request has a finite worst case. */
export const DEFAULT_MAX_TOKENS = 4096;

export const tokensForBytes = (bytes: number) => Math.ceil(bytes / BYTES_PER_TOKEN);

/**
 * Bytes of a value serialised as JSON, counted without recursion, so a body nested 100,000 deep
 * is measured rather than overflowing the stack. Strings count their UTF-8 bytes plus quotes.
 */
export function jsonBytes(value: unknown): number {
  let bytes = 0;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') bytes += Buffer.byteLength(v) + 2;
    else if (v === null || v === undefined) bytes += 4;
    else if (typeof v !== 'object') bytes += String(v).length;
    else if (Array.isArray(v)) {
      bytes += 2 + v.length;
      for (const item of v) stack.push(item);
    } else {
      bytes += 2;
      for (const key of Object.keys(v)) {
        bytes += Buffer.byteLength(key) + 4;
        stack.push((v as Record<string, unknown>)[key]);
      }
    }
  }
  return bytes;
}

/** The priciest of `routes` for this usage: a fallback route may be the one that serves. */
export function worstCostMicros(routes: readonly ModelRoute[], usage: { inputTokens: number; outputTokens: number }): number {
  return Math.max(...routes.map((route) => tokenCostMicros(route.model.price, usage)));
}

/** A chat (or Responses) request: every byte of the body counts as input, plus max tokens for each of `n` choices. */
export function estimateChatMicros(routes: readonly ModelRoute[], body: Record<string, unknown>, bodyBytes: number): number {
  const maxTokens = Number(body.max_completion_tokens ?? body.max_tokens ?? body.max_output_tokens ?? DEFAULT_MAX_TOKENS);
  const choices = Number.isInteger(body.n) && (body.n as number) > 0 ? (body.n as number) : 1;
  const outputTokens = (Number.isFinite(maxTokens) && maxTokens >= 0 ? maxTokens : DEFAULT_MAX_TOKENS) * choices;
  return worstCostMicros(routes, { inputTokens: tokensForBytes(bodyBytes), outputTokens });
}

/** Template text around each evaluate prompt, in tokens: generous, so the estimate errs high. */
const EVALUATE_PROMPT_OVERHEAD = 256;
/** Output tokens per question: one label in logprobs mode; native answers are small JSON. */
const EVALUATE_OUTPUT_PER_QUESTION = 16;

/** An evaluate request: the whole body once, plus the state and a prompt again for each question (logprobs mode sends one call each). */
export function estimateEvaluateMicros(route: ModelRoute, state: unknown, bodyBytes: number, questionCount: number): number {
  const inputTokens = tokensForBytes(bodyBytes) + questionCount * (tokensForBytes(jsonBytes(state)) + EVALUATE_PROMPT_OVERHEAD);
  return tokenCostMicros(route.model.price, { inputTokens, outputTokens: questionCount * EVALUATE_OUTPUT_PER_QUESTION });
}
