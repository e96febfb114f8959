// The contract between a client dialect and an upstream protocol: how requests, answers and stream events cross.
import type { LoadedConfig, ModelRoute } from '../config/types.js';
import type { TokenUsage } from '../billing/cost.js';
import type { GatewayError } from '../errors.js';
import type { SseEvent } from './sse.js';

export interface TranslateContext {
  route: ModelRoute;
  /** The model id the client sent (answers carry it back). */
  clientModel: string;
  requestId: string;
  /** Renders the cost of usage for an answer, or undefined when none can be computed. */
  costOf(usage: TokenUsage): { amount: number; currency: string };
}

export interface StreamMapper {
  /** One upstream event in, zero or more client events out. */
  push(event: SseEvent): SseEvent[];
  /** Usage reported so far. */
  usage(): TokenUsage | undefined;
  /** The upstream ended cleanly: any closing events. */
  end(): SseEvent[];
  /** The upstream failed mid-stream: the events that tell the client. */
  fail(error: GatewayError): SseEvent[];
}

export interface ChatTranslator {
  /** Protocol operation to call (e.g. `chat`). */
  operation: string;
  /** Client body to upstream body; `wantsUsage` records whether the client asked for stream usage. */
  request(body: Record<string, unknown>, ctx: TranslateContext): Record<string, unknown>;
  /** Upstream answer to client answer. */
  response(body: Record<string, unknown>, ctx: TranslateContext): Record<string, unknown>;
  /** Usage an upstream answer reports. */
  usage(body: Record<string, unknown>): TokenUsage | undefined;
  stream(ctx: TranslateContext, clientBody: Record<string, unknown>): StreamMapper;
}

export type TranslatorFactory = (config: LoadedConfig) => (clientDialect: string, route: ModelRoute) => ChatTranslator | undefined;
