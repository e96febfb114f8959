// Talks to channels: one undici pool per channel with connect, header and body timeouts; upstream failures become typed errors.
// The pipeline's send stage (src/pipeline/send.ts) encodes bodies and sets deadlines; this module only moves bytes.
import type { Readable } from 'node:stream';
import { Pool, errors as undiciErrors, type Dispatcher, type FormData } from 'undici';
import type { ChannelConfig, ModelRoute } from '../config/types.js';
import type { LoadedConfig } from './loaded-config.js';
import { ChannelUnavailableError, GatewayError, UpstreamError } from '../base/errors.js';
import type { Metrics } from '../base/metrics.js';
import type { AbortSource } from '../net/call-abort.js';
import { authenticatorFor, type Authenticator } from './credentials/authenticator.js';
import { registerLiveSecrets } from './credentials/secrets.js';
import { TokenCaches } from './credentials/token-cache.js';
import { authenticated } from './credentials/outgoing.js';
import { renderer } from './translate/render.js';
import { CircuitBreaker, RetryBudget, retryInterceptor, type CircuitState } from './resilience.js';
import { commonErrorMessage, upstreamHttpError } from './upstream-errors.js';

export { sanitizeUpstreamMessage, upstreamErrorOf, upstreamHttpError } from './upstream-errors.js';

export interface UpstreamRequest {
  operation: string;
  body?: string | Buffer | Readable | FormData | null;
  /** Extra headers for this call (the send stage sets content-type for the operation's encoding). */
  headers?: Record<string, string>;
  query?: Record<string, string>;
  /** An AbortSignal, or the call's own abort (net/call-abort.ts), which undici takes as an EventEmitter-shaped signal. */
  signal?: AbortSignal | AbortSource;
  /** Values for Liquid in the operation path besides `model` (e.g. a task id). */
  pathScope?: Record<string, unknown>;
  /** A path and query on the channel's own origin that replaces the operation's (an absolute URL the upstream gave); with no declared operation, a GET. */
  originPath?: string;
  /** Sent once, never retried by the channel's `retries` (a task's submit: the upstream may have made the task). */
  once?: boolean;
  /** The request asks for a stream: an operation with a `streamPath` is sent there. */
  stream?: boolean;
}

export type UpstreamResponse = Dispatcher.ResponseData<unknown>;

interface ChannelClient {
  pool: Pool;
  /** The pool, with retries composed on when the channel allows them. */
  dispatcher: Dispatcher;
  budget: RetryBudget;
  breaker: CircuitBreaker;
  basePath: string;
  /** Headers that are the same for every request. */
  headers: Record<string, string>;
  /** How each request is authenticated (src/engine/credentials): a header, a cached token, or a signature over the body. */
  auth?: Authenticator;
  origin: URL;
}

export class Upstreams {
  private readonly clients = new Map<string, ChannelClient>();
  /** Tokens by credential: channels that hold the same credential (client and scope, service account) share one. */
  private readonly tokenCaches: TokenCaches;

  /** `now` (Unix milliseconds) dates tokens and signatures; tests inject theirs. */
  constructor(
    private readonly config: LoadedConfig,
    private readonly metrics?: Metrics,
    private readonly now: () => number = Date.now,
  ) {
    this.tokenCaches = new TokenCaches(now);
  }

  private client(channel: ChannelConfig): ChannelClient {
    let client = this.clients.get(channel.id);
    if (client) return client;
    const url = new URL(channel.baseUrl);
    const protocol = this.config.protocols.get(channel.protocol)!;
    const scope = { credential: channel.credentialValue ?? '', secret: channel.secretValue ?? '' };
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries({ ...protocol.headers, ...channel.headers })) {
      headers[name.toLowerCase()] = this.config.templates.get(value).render(scope);
    }
    const pool = new Pool(url.origin, {
      connections: channel.pool.connections,
      pipelining: channel.pool.pipelining,
      connectTimeout: channel.timeouts.connectMs,
      headersTimeout: channel.timeouts.headersMs,
      bodyTimeout: channel.timeouts.bodyMs,
      keepAliveTimeout: 30_000,
    });
    const budget = new RetryBudget(channel.retries.budget, channel.retries.burst);
    client = {
      pool,
      dispatcher: channel.retries.max > 0 ? pool.compose(retryInterceptor(channel, budget, () => this.metrics?.retries.inc({ channel: channel.id }))) : pool,
      budget,
      breaker: new CircuitBreaker(channel.breaker.failures, channel.breaker.coolDownMs),
      // A base URL built from a variable may carry a doubled slash (`${ENDPOINT}/v1` with ENDPOINT ending in one).
      basePath: url.pathname.replace(/\/{2,}/g, '/').replace(/\/$/, ''),
      headers,
      auth: authenticatorFor({ channel, protocol, templates: this.config.templates, now: this.now, tokenCache: (identity, fetchToken) => this.tokenCaches.of(identity, fetchToken) }),
      origin: url,
    };
    if (client.auth) registerLiveSecrets(channel, client.auth);
    this.clients.set(channel.id, client);
    return client;
  }

  /** The channel's own headers and its credential for a bodiless request to `url`: a host its protocol declares (poll.hosts), never another. */
  async headersOf(channel: ChannelConfig, method: string, url: URL): Promise<Record<string, string>> {
    const client = this.client(channel);
    return (await authenticated(client.auth, url, method, { ...client.headers }, undefined)).headers;
  }

  /** Renders the operation's path for a route: Liquid with `model` and any extra scope, every value URL-encoded. */
  pathFor(route: ModelRoute, operation: string, scope: Record<string, unknown> = {}, stream = false): { method: string; path: string } {
    const op = route.protocol.operations[operation];
    if (!op) throw new GatewayError('operation_unsupported', 400, 'invalid_request_error', `channel "${route.channel.id}" (protocol ${route.protocol.id}) does not support ${operation}`);
    const template = stream && op.streamPath ? op.streamPath : op.path;
    if (!template.includes('{{')) return { method: op.method ?? 'POST', path: template };
    // `@` may stand in a path segment as it is (RFC 3986 pchar): Vertex AI's model versions (`claude-x@20250929`) keep it.
    const encoded = Object.fromEntries(Object.entries({ model: route.model.upstream ?? route.model.id, ...scope }).map(([k, v]) => [k, encodeURIComponent(String(v ?? '')).replace(/%40/g, '@')]));
    return { method: op.method ?? 'POST', path: this.config.templates.get(template).render(encoded) };
  }

  /** Sends one request to a route's channel; non-2xx answers become typed errors. */
  async send(route: ModelRoute, request: UpstreamRequest): Promise<UpstreamResponse> {
    const channel = route.channel;
    if (channel.disabledReason) throw new ChannelUnavailableError(channel.disabledReason);
    const client = this.client(channel);
    // An absolute URL on the channel's origin (originPath) with no declared operation is a GET of that URL.
    const { method, path } = request.originPath !== undefined && !route.protocol.operations[request.operation] ? { method: 'GET', path: '' } : this.pathFor(route, request.operation, request.pathScope, request.stream);
    const query = request.query ? `?${new URLSearchParams(request.query)}` : '';
    // An open circuit fails at once (503), so a fallback group moves on without waiting on a channel that is down.
    if (!client.breaker.admit()) {
      const wait = client.breaker.retryInSeconds();
      throw new ChannelUnavailableError(`channel "${channel.id}" is failing; its circuit is open, next probe in ${wait} s`, wait);
    }
    const fullPath = request.originPath ?? `${client.basePath}${path}${query}`;
    // Authenticated before the call counts against the channel: a token that cannot be had is a 502 of its own.
    const { headers, body } = await authenticated(client.auth, new URL(fullPath, client.origin), method, { ...client.headers, ...request.headers }, request.body ?? undefined);
    client.budget.deposit();
    const started = performance.now();
    let response: UpstreamResponse;
    try {
      response = await (request.once ? client.pool : client.dispatcher).request<unknown>({
        method: method as Dispatcher.HttpMethod,
        path: fullPath,
        headers,
        body,
        signal: request.signal as Dispatcher.RequestOptions['signal'],
      });
    } catch (err) {
      if (request.signal?.aborted) client.breaker.abandon();
      else client.breaker.failure();
      throw upstreamTransportError(err, channel.id);
    }
    // Overload (529; 429 is below 500) slows a channel down, it does not mean the channel is broken: the circuit stays as it is.
    if (response.statusCode === 529) client.breaker.abandon();
    else if (response.statusCode >= 500) client.breaker.failure();
    else client.breaker.success();
    this.metrics?.observeUpstream(channel.id, response.statusCode, (performance.now() - started) / 1000);
    if (response.statusCode >= 400) throw await upstreamHttpError(response, route, this.errorMessage(route, request.operation));
    return response;
  }

  /**
   * Tries each route in order until one answers; only failures that happened before any answer
   * (unreachable, 5xx, 429) move on to the next route of a fallback group.
   */
  async sendFirst(routes: readonly ModelRoute[], build: (route: ModelRoute, index: number) => UpstreamRequest): Promise<{ route: ModelRoute; response: UpstreamResponse }> {
    let lastError: unknown;
    for (let index = 0; index < routes.length; index++) {
      const route = routes[index];
      const request = build(route, index);
      try {
        return { route, response: await this.send(route, request) };
      } catch (err) {
        lastError = err;
        const retriable = err instanceof ChannelUnavailableError || (err instanceof GatewayError && (err.statusCode >= 500 || err.statusCode === 429));
        if (!retriable || request.signal?.aborted) throw err;
      }
    }
    throw lastError;
  }

  /** How this operation's error bodies name their message: its `errors.message` mapping, else the common shapes. */
  errorMessage(route: ModelRoute, operation: string): (answer: unknown) => unknown {
    const spec = route.protocol.operations[operation]?.errors;
    if (!spec) return commonErrorMessage;
    const render = renderer(this.config, spec.message, `${route.protocol.file} /operations/${operation}/errors/message`);
    return (answer) => render({ answer });
  }

  /** Each channel's circuit, for /readyz and /metrics; channels not called yet are closed. */
  circuits(): Record<string, CircuitState> {
    return Object.fromEntries(this.config.channels.map((c) => [c.id, this.clients.get(c.id)?.breaker.state ?? 'closed']));
  }

  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].map((c) => c.pool.close()));
  }
}

export function upstreamTransportError(err: unknown, channel: string): Error {
  if (err instanceof GatewayError) return err;
  if ((err as Error)?.name === 'AbortError') return err as Error;
  const code = (err as { code?: string })?.code;
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || err instanceof undiciErrors.HeadersTimeoutError) {
    return new UpstreamError(`channel "${channel}" timed out`, 504, 'upstream_timeout');
  }
  const unreachable = new UpstreamError(`channel "${channel}" is unreachable`, 502, 'upstream_unreachable');
  unreachable.transport = transportCause(err);
  return unreachable;
}

interface SocketError {
  code?: string;
  address?: string;
  port?: number;
  cause?: unknown;
  errors?: unknown[];
}

/** The system error under a failed connection (fetch's cause, or the first of several addresses tried): its code and address. */
function transportCause(err: unknown): { address?: string; errno?: string } {
  let current = err as SocketError | undefined;
  for (let depth = 0; current && depth < 4; depth++) {
    const first = (current.errors?.[0] ?? current) as SocketError;
    if (typeof current.code === 'string' && /^E[A-Z]+$/.test(current.code)) {
      const address = first.address ?? current.address;
      const port = first.port ?? current.port;
      return { errno: current.code, ...(address ? { address: port ? `${address.includes(':') ? `[${address}]` : address}:${port}` : address } : {}) };
    }
    current = current.cause as SocketError | undefined;
  }
  return {};
}
