// The shape tracing has for the app and the pipeline; src/telemetry builds it when tracing is on (declared here, where the Call it names lives).
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Charge } from '../billing/meter.js';
import type { ModelRoute } from '../config/types.js';
import type { RouteHandler } from '../http/route-handler.js';
import type { Call } from './call.js';

/**
 * What tracing adds when it is on. Each piece is chosen once, when routes are registered: with tracing off the app
 * registers none of it and the hot path reads one undefined property per billed request (services.tracing), nothing more.
 */
export interface Tracing {
  /** App-wide hooks: the request's span (parented by the client's traceparent), ended once answered and charged. */
  register(app: FastifyInstance): void;
  /** The route's key check inside an `auth` span. */
  auth(hook: onRequestAsyncHookHandler): onRequestAsyncHookHandler;
  /** The route's handler inside the request span's context, so the upstream call's span (undici) is its child. */
  handler(handler: RouteHandler): RouteHandler;
  /** The reservation inside a `reserve` span; the charge it returns settles inside a `settle` span. */
  reserve(call: Call, route: ModelRoute, estimateMicros: number, reservationTtlMs?: number): Promise<Charge>;
  /** True when an onSend hook reads each answer's text (captureContent): answers then go out through fastify's send. */
  readonly readsAnswers: boolean;
  /** The trace id of the request's span (the request log keeps it). */
  traceId(req: FastifyRequest): string | undefined;
  /** Exports the spans ended so far. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}
