// Tracing with the OpenTelemetry Node SDK, exported as OTLP/HTTP JSON; loaded only when telemetry.otlp.endpoint is set.
import { context, propagation, SpanKind, SpanStatusCode, trace, ROOT_CONTEXT, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Charge, ChargeRef, Settlement, SettleOutcome } from '../billing/meter.js';
import type { ModelRoute } from '../config/types.js';
import type { RouteHandler } from '../http/route-handler.js';
import { GatewayError } from '../base/errors.js';
import { modelKinds } from '../engine/models.js';
import type { Call } from '../pipeline/call.js';
import type { TelemetryConfig, Tracing } from './types.js';

/** Longest prompt or completion text a span carries when content capture is on. */
const CONTENT_LIMIT = 16 * 1024;

/** One traced request: its span, the context its children start in, and what must happen before the span ends. */
class TracedRequest {
  responded = false;
  /** Charges not yet ended: the span ends once the answer is out and every charge settled or released. */
  openCharges = 0;
  ended = false;
  constructor(
    readonly span: Span,
    readonly context: Context,
  ) {}

  maybeEnd(): void {
    if (this.ended || !this.responded || this.openCharges > 0) return;
    this.ended = true;
    this.span.end();
  }
}

const tracedRequest = Symbol('tracedRequest');
type WithTrace = FastifyRequest & { [tracedRequest]?: TracedRequest };
const traceOf = (req: FastifyRequest) => (req as WithTrace)[tracedRequest];

function fail(span: Span, err: unknown): void {
  const error = err as Error;
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof GatewayError ? error.code : error?.name });
  if (error instanceof GatewayError) span.setAttribute('error.type', error.code);
  else if (error instanceof Error) span.recordException(error);
}

const cut = (text: string) => (text.length > CONTENT_LIMIT ? `${text.slice(0, CONTENT_LIMIT)}...` : text);

/** A charge whose settlement is a `settle` span, with the usage and cost on it and on the request's span. */
class TracedCharge implements Charge {
  /** Still counted among the request's open charges. */
  private counted = true;
  /** A settlement is being recorded: it ends the count once its cost is on the spans, whatever a release says meanwhile. */
  private settling = false;

  constructor(
    private readonly inner: Charge,
    private readonly request: TracedRequest,
    private readonly tracer: Tracer,
  ) {}

  get ref(): ChargeRef {
    return this.inner.ref;
  }

  get ended(): boolean {
    return this.inner.ended;
  }

  settle(settlement: Settlement): Promise<SettleOutcome> {
    return this.traced(settlement, () => this.inner.settle(settlement));
  }

  settleReserved(): Promise<SettleOutcome> {
    return this.traced(undefined, () => this.inner.settleReserved());
  }

  renew(ttlMs: number): Promise<boolean> {
    return this.inner.renew(ttlMs);
  }

  async release(): Promise<void> {
    try {
      await this.inner.release();
    } finally {
      // The pipeline releases every charge as its call ends, which may be before a settlement of it commits (the
      // client is not kept waiting for the ledger): the request's span then waits for the settlement's cost.
      if (!this.settling) this.done();
    }
  }

  close(): Promise<void> {
    return this.release();
  }

  private async traced(settlement: Settlement | undefined, run: () => Promise<SettleOutcome>): Promise<SettleOutcome> {
    if (this.inner.ended) return run();
    const span = this.tracer.startSpan('settle', undefined, this.request.context);
    const usage: Record<string, number> = {};
    if (settlement?.inputTokens !== undefined) usage['gen_ai.usage.input_tokens'] = settlement.inputTokens;
    if (settlement?.outputTokens !== undefined) usage['gen_ai.usage.output_tokens'] = settlement.outputTokens;
    if (settlement?.cachedInputTokens) usage['gen_ai.usage.cache_read.input_tokens'] = settlement.cachedInputTokens;
    if (!settlement) span.setAttribute('gateway.settled_at_reservation', true);
    span.setAttributes(usage);
    this.request.span.setAttributes(usage);
    this.settling = true;
    try {
      const outcome = await run();
      const cost = { 'gateway.cost': outcome.chargedMicros / 1e6, 'gateway.cost.currency': this.inner.ref.currency, 'gateway.overage': outcome.overageMicros / 1e6 };
      span.setAttributes(cost);
      this.request.span.setAttributes(cost);
      return outcome;
    } catch (err) {
      fail(span, err);
      throw err;
    } finally {
      span.end();
      this.settling = false;
      this.done();
    }
  }

  private done(): void {
    if (!this.counted) return;
    this.counted = false;
    this.request.openCharges--;
    this.request.maybeEnd();
  }
}

/** Starts the SDK (exporter, provider, process-wide registration) and traces upstream calls made inside a request. */
function startProvider(config: TelemetryConfig): { provider: NodeTracerProvider; undici: UndiciInstrumentation } {
  const base = config.otlp.endpoint!.replace(/\/+$/, '');
  const exporter = new OTLPTraceExporter({
    url: base.endsWith('/v1/traces') ? base : `${base}/v1/traces`,
    headers: config.otlp.headers,
    timeoutMillis: config.otlp.timeoutSeconds * 1000,
  });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName, [ATTR_SERVICE_VERSION]: process.env.npm_package_version ?? '0.1.0' }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  // The AsyncLocalStorage context manager and the W3C trace-context propagator, process-wide.
  provider.register();
  // Upstream calls become children of the request span and carry its traceparent; calls outside a request are not traced.
  const undici = new UndiciInstrumentation({ requireParentforSpans: true });
  undici.setTracerProvider(provider);
  undici.enable();
  return { provider, undici };
}

/** The Fastify hooks that start a request's span, end it once answered, mark errors and (with content capture) record the answer. */
function requestHooks(tracer: Tracer, genAiRequests: WeakSet<TracedRequest>) {
  const onRequest = (req: FastifyRequest, _reply: FastifyReply, done: () => void) => {
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tracer.startSpan(
      `${req.method} ${req.routeOptions.url ?? 'unmatched'}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method, 'http.route': req.routeOptions.url ?? '', 'gateway.request.id': req.id } },
      parent,
    );
    (req as WithTrace)[tracedRequest] = new TracedRequest(span, trace.setSpan(parent, span));
    done();
  };
  const onResponse = (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const traced = traceOf(req);
    if (traced) {
      traced.span.setAttribute('http.response.status_code', reply.statusCode);
      if (reply.statusCode >= 500) traced.span.setStatus({ code: SpanStatusCode.ERROR });
      traced.responded = true;
      traced.maybeEnd();
    }
    done();
  };
  const onError = (req: FastifyRequest, _reply: FastifyReply, err: Error, done: () => void) => {
    const traced = traceOf(req);
    if (traced) fail(traced.span, err);
    done();
  };
  // Completions leave in the answer's JSON; only when the operator asked for content, and only for GenAI calls.
  const onSend = (req: FastifyRequest, _reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void) => {
    const traced = traceOf(req);
    if (traced && typeof payload === 'string' && traced.span.isRecording() && genAiRequests.has(traced)) traced.span.setAttribute('gen_ai.output.messages', cut(payload));
    done(null, payload);
  };
  return { onRequest, onResponse, onError, onSend };
}

/** Wraps the auth hook in an `auth` span, putting the workspace and key it found on the request's span. */
function traceAuth(tracer: Tracer, hook: onRequestAsyncHookHandler): onRequestAsyncHookHandler {
  return async function tracedAuth(this: unknown, req, reply) {
    const traced = traceOf(req);
    if (!traced) return hook.call(this as never, req, reply);
    const span = tracer.startSpan('auth', undefined, traced.context);
    try {
      await hook.call(this as never, req, reply);
      if (req.auth) {
        const who = { 'gateway.workspace.id': req.auth.workspaceId, 'gateway.key.id': req.auth.keyId };
        span.setAttributes(who);
        traced.span.setAttributes(who);
      }
    } catch (err) {
      fail(span, err);
      throw err;
    } finally {
      span.end();
    }
  };
}

/** Puts the GenAI attributes of a model call on the request's span (and, with content capture, its input). */
function recordGenAiCall(traced: TracedRequest, call: Call, route: ModelRoute, captureContent: boolean): void {
  const genAi: Record<string, string | number> = {
    'gen_ai.operation.name': modelKinds(call.config.endpoints).get(route.model.kind)?.genAiOperation ?? route.model.kind,
    'gen_ai.request.model': route.model.id,
    // The operator's name for the provider: the channel's id (channels are data; nothing here knows a vendor).
    'gen_ai.provider.name': route.channel.id,
    'gateway.channel.id': route.channel.id,
  };
  const maxTokens = call.body.max_tokens ?? call.body.max_completion_tokens ?? call.body.max_output_tokens;
  if (typeof maxTokens === 'number') genAi['gen_ai.request.max_tokens'] = maxTokens;
  traced.span.setAttributes(genAi);
  if (call.body.stream === true) traced.span.setAttribute('gateway.stream', true);
  if (captureContent) {
    const input = call.body.messages ?? call.body.input ?? call.body.prompt ?? call.body.questions;
    if (input !== undefined) traced.span.setAttribute('gen_ai.input.messages', cut(JSON.stringify(input)));
    if (typeof call.body.system === 'string' || Array.isArray(call.body.system)) traced.span.setAttribute('gen_ai.system_instructions', cut(JSON.stringify(call.body.system)));
  }
}

export function createOtelTracing(config: TelemetryConfig): Tracing {
  const { provider, undici } = startProvider(config);
  const tracer = provider.getTracer('relay-gateway');
  const genAiRequests = new WeakSet<TracedRequest>();
  const { onRequest, onResponse, onError, onSend } = requestHooks(tracer, genAiRequests);

  return {
    readsAnswers: config.captureContent,
    register(app) {
      app.addHook('onRequest', onRequest);
      app.addHook('onResponse', onResponse);
      app.addHook('onError', onError);
      if (config.captureContent) app.addHook('onSend', onSend);
    },

    auth(hook: onRequestAsyncHookHandler): onRequestAsyncHookHandler {
      return traceAuth(tracer, hook);
    },

    handler(handler: RouteHandler): RouteHandler {
      return (req, reply) => {
        const traced = traceOf(req);
        return traced ? context.with(traced.context, handler, undefined, req, reply) : handler(req, reply);
      };
    },

    async reserve(call: Call, route: ModelRoute, estimateMicros: number, reservationTtlMs?: number): Promise<Charge> {
      const begin = () => call.services.meter.begin({ auth: call.auth, route, requestId: call.requestId, estimateMicros, reservationTtlMs, observer: call.settlements });
      const traced = traceOf(call.carrier as FastifyRequest);
      if (!traced) return begin();
      genAiRequests.add(traced);
      recordGenAiCall(traced, call, route, config.captureContent);
      const span = tracer.startSpan('reserve', { attributes: { 'gateway.reserved': Math.ceil(estimateMicros) / 1e6 } }, traced.context);
      try {
        const charge = await begin();
        traced.openCharges++;
        return new TracedCharge(charge, traced, tracer);
      } catch (err) {
        fail(span, err);
        throw err;
      } finally {
        span.end();
      }
    },

    traceId: (req) => traceOf(req)?.span.spanContext().traceId,

    flush: () => provider.forceFlush(),

    async shutdown() {
      undici.disable();
      await provider.shutdown();
      // Process-wide registrations go with it, so a later start (a test, a restart in process) can register again.
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
