// The contract between a client dialect and an upstream protocol operation: how requests, answers and stream events cross.
import type { MediaItems, ModelRoute } from '../config/types.js';
import type { LoadedConfig } from './loaded-config.js';
import type { TokenUsage } from '../billing/cost.js';
import type { StreamMapper } from './stream-mapper.js';

export interface TranslateContext {
  route: ModelRoute;
  /** The model id the client sent (answers carry it back). */
  clientModel: string;
  requestId: string;
  /** The client's request, for answers that echo it (a Responses object repeats its instructions and tools). */
  request?: Record<string, unknown>;
  /** Usage the upstream reported so far, read once by the pipeline as the protocol operation declares it. */
  usage(): TokenUsage | undefined;
  /** Renders the cost of usage for an answer. */
  costOf(usage: TokenUsage): { amount: number; currency: string };
  /** The reservation, rendered: what an answer without usage is charged. */
  reservedCost?(): { amount: number; currency: string };
  /** The request's input tokens counted locally, for a stream whose upstream reports input only at its end. */
  inputEstimate?: number;
}

export type { StreamMapper } from './stream-mapper.js';

export interface ChatTranslator {
  /** Protocol operation to call (e.g. `chat`). */
  operation: string;
  /** Client body to upstream body. */
  request(body: Record<string, unknown>, ctx: TranslateContext): Record<string, unknown>;
  /** Upstream answer to client answer. */
  response(body: Record<string, unknown>, ctx: TranslateContext): Record<string, unknown>;
  stream(ctx: TranslateContext, clientBody: Record<string, unknown>): StreamMapper;
  /** Media in the translated answer, archived before it is sent (a declared translation's `outputs`). */
  outputs?: { answer?: MediaItems };
}

export type TranslatorFactory = (config: LoadedConfig) => (clientDialect: string, route: ModelRoute) => ChatTranslator | undefined;
