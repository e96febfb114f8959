// Worst-case cost of a request before it is sent, reserved against spending caps.
import type { ModelRoute } from '../config/types.js';
import { tokenCostMicros } from './cost.js';

/** Bytes per token assumed when estimating input size: low, so the estimate errs high. */
const BYTES_PER_TOKEN = 3;
/** Output bound applied when a chat client sets none, so every request has a finite worst case. */
export const DEFAULT_MAX_TOKENS = 4096;

export function estimateInputTokens(value: unknown): number {
  return Math.ceil(Buffer.byteLength(JSON.stringify(value ?? '')) / BYTES_PER_TOKEN);
}

/** Worst case of a chat request on the priciest of its routes (a fallback may serve it): input, plus max tokens for each of `n` choices. */
export function estimateChatMicros(routes: readonly ModelRoute[], body: Record<string, unknown>): number {
  const maxTokens = Number(body.max_completion_tokens ?? body.max_tokens ?? DEFAULT_MAX_TOKENS);
  const choices = Number.isInteger(body.n) && (body.n as number) > 0 ? (body.n as number) : 1;
  const inputTokens = estimateInputTokens({ system: body.system, messages: body.messages, tools: body.tools });
  const outputTokens = (Number.isFinite(maxTokens) ? maxTokens : DEFAULT_MAX_TOKENS) * choices;
  return Math.max(...routes.map((route) => tokenCostMicros(route.model.price, { inputTokens, outputTokens })));
}

/** Template text around each evaluate prompt, in tokens: generous, so the estimate errs high. */
const EVALUATE_PROMPT_OVERHEAD = 256;
/** Output tokens per question: one label in logprobs mode; native answers are small JSON. */
const EVALUATE_OUTPUT_PER_QUESTION = 16;

/** Worst case for an evaluate request: the state and prompt sent once per question (logprobs mode), plus each question. */
export function estimateEvaluateMicros(route: ModelRoute, state: unknown, questions: unknown, questionCount: number): number {
  const inputTokens = questionCount * (estimateInputTokens(state) + EVALUATE_PROMPT_OVERHEAD) + estimateInputTokens(questions);
  return tokenCostMicros(route.model.price, { inputTokens, outputTokens: questionCount * EVALUATE_OUTPUT_PER_QUESTION });
}
