// Worst-case cost of a request before it is sent, reserved against spending caps: a true upper bound for an honest upstream.
import type { ModelLimits, ModelRoute } from '../config/types.js';
import { dearestTokenPrices, tokenCostMicros } from './cost.js';
import { reservedUnitsMicros, type UnitRequest } from './units.js';

/** Bytes per token assumed when estimating input size: low, so the estimate errs high. */
const BYTES_PER_TOKEN = 3;

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

/** Top-level members that name input the upstream keeps (a stored response, conversation or prompt, MCP servers, a container). */
const storedInputMembers = ['previous_response_id', 'conversation', 'prompt', 'mcp_servers', 'container'];
/** Tool types the client defines itself; any other type is a server-side tool whose input the gateway never sees. */
const clientToolTypes = new Set(['function', 'custom']);
const isRemote = (v: unknown) => typeof v === 'string' && /^https?:\/\//i.test(v);

/**
 * Whether the upstream may run tools itself (web search, code execution, MCP servers): it then makes several model
 * calls for one request, and the usage it reports may add up to more than one context window.
 */
export function usesServerTools(body: Record<string, unknown>): boolean {
  if (body.web_search_options !== undefined || body.mcp_servers !== undefined) return true;
  return Array.isArray(body.tools) && body.tools.some((t) => t && typeof t === 'object' && typeof (t as { type?: unknown }).type === 'string' && !clientToolTypes.has((t as { type: string }).type));
}

/**
 * Whether the request references input the gateway cannot measure from its bytes: stored state upstream, a remote
 * image or file (by URL or by the upstream's file id), or a server-side tool. Walks the body without recursion.
 */
export function referencesUnmeasuredInput(body: Record<string, unknown>): boolean {
  for (const name of storedInputMembers) if (body[name] !== undefined && body[name] !== null && body[name] !== '') return true;
  if (usesServerTools(body)) return true;
  const stack: unknown[] = [body.messages, body.input, body.system];
  while (stack.length) {
    const v = stack.pop();
    if (!v || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (const item of v) stack.push(item);
      continue;
    }
    const o = v as Record<string, unknown>;
    if (isRemote(o.url) || isRemote(o.image_url) || isRemote(o.file_url) || (typeof o.file_id === 'string' && o.file_id)) return true;
    for (const key in o) if (o[key] && typeof o[key] === 'object') stack.push(o[key]);
  }
  return false;
}

/** The client's output bound: OpenAI's max_completion_tokens or max_tokens, Responses' max_output_tokens, Anthropic's max_tokens. */
export function clientOutputBound(body: Record<string, unknown>): number | undefined {
  const bound = body.max_completion_tokens ?? body.max_tokens ?? body.max_output_tokens;
  return typeof bound === 'number' && Number.isFinite(bound) && bound >= 0 ? Math.ceil(bound) : undefined;
}

/**
 * A chat (or Responses, or Messages) request's worst case on the priciest of its routes, every input token at the
 * dearest input class (a cache write costs more than plain input). Input: the bytes of the whole body (every field
 * counts), at most the model's context; or the whole context when the request references input the gateway cannot
 * measure. Output: the client's bound, else the model's maxOutputTokens, for each of `n` choices. A model without
 * limits is estimated with `defaults`, which are never sent upstream.
 */
export function estimateChatMicros(routes: readonly ModelRoute[], body: Record<string, unknown>, bodyBytes: number, defaults: ModelLimits): number {
  const choices = Number.isInteger(body.n) && (body.n as number) > 0 ? (body.n as number) : 1;
  const bound = clientOutputBound(body);
  const unmeasured = referencesUnmeasuredInput(body);
  const bodyTokens = tokensForBytes(bodyBytes);
  return Math.max(
    ...routes.map((route) => {
      const limits = route.model.limits;
      const context = (limits ?? defaults).contextTokens;
      const maxOutput = (limits ?? defaults).maxOutputTokens;
      const inputTokens = unmeasured ? Math.max(context, limits ? 0 : bodyTokens) : limits ? Math.min(bodyTokens, context) : bodyTokens;
      const outputTokens = (bound === undefined ? maxOutput : limits ? Math.min(bound, maxOutput) : bound) * choices;
      const dearest = dearestTokenPrices(route.model.price);
      return Math.round(inputTokens * dearest.input + outputTokens * dearest.output + (route.model.price.perRequest ?? 0) * 1e6);
    }),
  );
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

/**
 * A relayed request's worst case on the priciest of its routes, each unit its price counts bounded: input tokens by the
 * body's bytes (at most the model's context), output tokens by the model's maxOutputTokens (or `defaults`), and every
 * other unit as it reserves (billing/units.ts: audio by its decoded duration, search units by Cohere's rule, characters
 * as counted, a price's own units as declared). A `free` model costs nothing.
 */
export function estimateRelayMicros(routes: readonly ModelRoute[], bodyBytes: number, request: UnitRequest, defaults: ModelLimits): number {
  const bodyTokens = tokensForBytes(bodyBytes);
  return Math.max(
    ...routes.map(({ model }) => {
      const price = model.price;
      if (price.free) return 0;
      const limits = model.limits ?? defaults;
      const inputTokens = model.limits ? Math.min(bodyTokens, limits.contextTokens) : bodyTokens;
      const outputTokens = price.outputPerMillion || price.audioOutputPerMillion ? limits.maxOutputTokens : 0;
      const dearest = dearestTokenPrices(price);
      return Math.round(inputTokens * dearest.input + outputTokens * dearest.output + reservedUnitsMicros(model, request) + (price.perRequest ?? 0) * 1e6);
    }),
  );
}

/** Search units a request may use at most (Cohere's rule; see the catalogue's `pipeline.searches`). */
export function searchUnitsBound(query: unknown, documents: unknown, documentsPerSearch: number, tokensPerDocument: number): number {
  const queryBytes = typeof query === 'string' ? Buffer.byteLength(query) : jsonBytes(query);
  let chunks = 0;
  for (const document of Array.isArray(documents) ? documents : []) {
    const bytes = queryBytes + (typeof document === 'string' ? Buffer.byteLength(document) : jsonBytes(document));
    chunks += Math.max(1, Math.ceil(bytes / tokensPerDocument));
  }
  return Math.max(1, Math.ceil(chunks / documentsPerSearch));
}
