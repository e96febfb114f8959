// Talks to channels: one undici pool per channel with connect, header and body timeouts; upstream failures become typed errors.
// The pipeline's send stage (src/pipeline/send.ts) encodes bodies and sets deadlines; this module only moves bytes.
import { Readable } from 'node:stream';
import { Pool, errors as undiciErrors, type Dispatcher, type FormData } from 'undici';
import type { ResolvedCredential } from '../config/credentials.js';
import type { ChannelConfig, ModelRoute, RouteNode } from '../config/types.js';
import { nothingSent } from '../config/failover.js';
import { attemptsOf, type RoutingRequest } from './routing/order.js';
import { RouterState } from './routing/target-states.js';
import type { CooldownShare } from './routing/cooldown-share.js';
import type { LoadedConfig } from './loaded-config.js';
import { ChannelUnavailableError, channelNotConfigured, GatewayError, UpstreamError } from '../base/errors.js';
import { transportCause } from './transport-cause.js';
import type { Metrics } from '../base/metrics.js';
import type { AbortSource } from '../net/call-abort.js';
import { authenticatorFor, type Authenticator } from './credentials/authenticator.js';
import { registerLiveSecrets } from './credentials/secrets.js';
import { TokenCaches } from './credentials/token-cache.js';
import { authenticated } from './credentials/outgoing.js';
import { KeyPool, type KeyState } from './credentials/key-pool.js';
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

/** Where one credential's requests go and how they are authenticated: the channel's own, or an entry of its key pool. */
interface KeyClient {
  /** A key pool entry's label (the variable naming it); empty for a channel's one credential. */
  label: string;
  weight: number;
  pool: Pool;
  /** The pool, with retries composed on when the channel allows them. */
  dispatcher: Dispatcher;
  basePath: string;
  /** Headers that are the same for every request. */
  headers: Record<string, string>;
  /** How each request is authenticated (src/engine/credentials): a header, a cached token, or a signature over the body. */
  auth?: Authenticator;
  origin: URL;
}

interface ChannelClient {
  budget: RetryBudget;
  breaker: CircuitBreaker;
  /** One for a channel with one credential (or none); a key pool's entries that serve. */
  keys: KeyClient[];
  /** The channel's key pool (`credentials`), absent for one credential. */
  keyPool?: KeyPool<KeyClient>;
  /** The undici pools, one per origin its keys reach. */
  pools: Pool[];
}

/** Where the upstream client writes what an operator should know of a key pool (an entry revoked, and back). */
export interface UpstreamLog {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
}

/** One attempt at a route's target, as the request log lists it. */
export interface AttemptRecord {
  channel: string;
  model: string;
  status: number;
  latencyMs: number;
}

/** What a call lends a routed send: where its attempts are recorded, and a hold on the answering target until the call ends. */
export interface AttemptWatcher {
  attempted?(record: AttemptRecord): void;
  holdUntilDone(release: () => void): void;
}

export class Upstreams {
  private readonly clients = new Map<string, ChannelClient>();
  /** Tokens by credential: channels that hold the same credential (client and scope, service account) share one. */
  private readonly tokenCaches: TokenCaches;
  /** What this process knows of route targets (in flight, latency, cooldowns); made for the first routed request. */
  private routerState?: RouterState;

  /** `now` (Unix milliseconds) dates tokens and signatures and times key pools' rests; tests inject theirs. */
  constructor(
    private readonly config: LoadedConfig,
    private readonly metrics?: Metrics,
    private readonly now: () => number = Date.now,
    /** Cooldowns other processes set (Redis), when the fleet shares a cache. */
    private readonly cooldowns?: CooldownShare,
    private readonly log?: UpstreamLog,
  ) {
    this.tokenCaches = new TokenCaches(now);
  }

  private client(channel: ChannelConfig): ChannelClient {
    let client = this.clients.get(channel.id);
    if (client) return client;
    const budget = new RetryBudget(channel.retries.budget, channel.retries.burst);
    const pools = new Map<string, { pool: Pool; dispatcher: Dispatcher }>();
    const poolFor = (url: URL) => {
      let found = pools.get(url.origin);
      if (found) return found;
      const pool = new Pool(url.origin, {
        connections: channel.pool.connections,
        pipelining: channel.pool.pipelining,
        connectTimeout: channel.timeouts.connectMs,
        headersTimeout: channel.timeouts.headersMs,
        bodyTimeout: channel.timeouts.bodyMs,
        keepAliveTimeout: 30_000,
      });
      // A key pool moves a 429 on to its next entry instead of retrying it on the same key.
      const retries = channel.retries.max > 0 ? retryInterceptor(channel, budget, () => this.metrics?.retries.inc({ channel: channel.id }), { retry429: !channel.keyPool }) : undefined;
      pools.set(url.origin, (found = { pool, dispatcher: retries ? pool.compose(retries) : pool }));
      return found;
    };
    const entries = channel.keyPool ?? [{ label: '', weight: 1, baseUrl: undefined, auth: channel.auth }];
    const keys = entries.map((entry) => this.keyClient(channel, entry, poolFor));
    client = {
      budget,
      breaker: new CircuitBreaker(channel.breaker.failures, channel.breaker.coolDownMs),
      keys,
      keyPool: channel.keyPool ? new KeyPool(keys, channel.credentialCooldown, this.now) : undefined,
      pools: [...pools.values()].map(({ pool }) => pool),
    };
    registerLiveSecrets(channel, { liveSecrets: () => keys.flatMap((key) => key.auth?.liveSecrets() ?? []) });
    this.clients.set(channel.id, client);
    return client;
  }

  /** One credential's client: its headers rendered with its key, its authenticator, the undici pool of its origin. */
  private keyClient(channel: ChannelConfig, entry: { label: string; weight: number; baseUrl?: string; auth?: ResolvedCredential }, poolFor: (url: URL) => { pool: Pool; dispatcher: Dispatcher }): KeyClient {
    const url = new URL(entry.baseUrl ?? channel.baseUrl);
    const protocol = this.config.protocols.get(channel.protocol)!;
    const auth = entry.auth;
    const scope = channel.keyPool ? { credential: auth?.kind === 'static' ? auth.credential : '', secret: (auth?.kind === 'static' && auth.secret) || '' } : { credential: channel.credentialValue ?? '', secret: channel.secretValue ?? '' };
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries({ ...protocol.headers, ...channel.headers })) {
      headers[name.toLowerCase()] = this.config.templates.get(value).render(scope);
    }
    return {
      label: entry.label,
      weight: entry.weight,
      ...poolFor(url),
      // A base URL built from a variable may carry a doubled slash (`${ENDPOINT}/v1` with ENDPOINT ending in one).
      basePath: url.pathname.replace(/\/{2,}/g, '/').replace(/\/$/, ''),
      headers,
      auth: authenticatorFor({ channel, credential: auth, protocol, templates: this.config.templates, now: this.now, tokenCache: (identity, fetchToken) => this.tokenCaches.of(identity, fetchToken) }),
      origin: url,
    };
  }

  /** The channel's own headers and its credential for a bodiless request to `url`: a host its protocol declares (poll.hosts), never another. */
  async headersOf(channel: ChannelConfig, method: string, url: URL): Promise<Record<string, string>> {
    const client = this.client(channel);
    const key = client.keyPool?.pick() ?? client.keys[0];
    return (await authenticated(key.auth, url, method, { ...key.headers }, undefined)).headers;
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

  /**
   * Sends one request to a route's channel; non-2xx answers become typed errors. On a key pool, an entry the upstream
   * refused (401, 429: it did not run the request) rests and the request goes on to the next entry.
   */
  async send(route: ModelRoute, request: UpstreamRequest): Promise<UpstreamResponse> {
    const channel = route.channel;
    if (channel.disabledReason) throw channelNotConfigured(channel.id, channel.disabledReason);
    const client = this.client(channel);
    // An absolute URL on the channel's origin (originPath) with no declared operation is a GET of that URL.
    const { method, path } = request.originPath !== undefined && !route.protocol.operations[request.operation] ? { method: 'GET', path: '' } : this.pathFor(route, request.operation, request.pathScope, request.stream);
    const query = request.query ? `?${new URLSearchParams(request.query)}` : '';
    // An open circuit fails at once (503), so a fallback group moves on without waiting on a channel that is down.
    if (!client.breaker.admit()) {
      const wait = client.breaker.retryInSeconds();
      throw new ChannelUnavailableError(`channel "${channel.id}" is failing; its circuit is open, next probe in ${wait} s`, wait);
    }
    const first = client.keyPool ? client.keyPool.pick() : client.keys[0];
    if (!first) {
      client.breaker.abandon();
      throw allKeysRevoked(channel, client.keyPool!);
    }
    let key: KeyClient = first;
    let moved: KeyMoves | undefined;
    let counted = false;
    for (;;) {
      const fullPath = request.originPath ?? `${key.basePath}${path}${query}`;
      // Authenticated before the call counts against the channel: a token that cannot be had is a 502 of its own (on a
      // key pool, the entry rests and the next one is tried). The request's deadline covers the token fetch too: a
      // hanging token endpoint is the call's 504 at its deadline.
      let outgoing: Awaited<ReturnType<typeof authenticated>>;
      try {
        outgoing = await authenticated(key.auth, new URL(fullPath, key.origin), method, { ...key.headers, ...request.headers }, request.body ?? undefined, request.signal);
      } catch (err) {
        const next: KeyClient | undefined = client.keyPool && err instanceof UpstreamError && err.code === 'upstream_auth_failed' ? this.untokened(channel, client.keyPool, key, (moved ??= { tried: new Set() }), request) : undefined;
        if (!next) throw err;
        key = next;
        continue;
      }
      const { headers, body } = outgoing;
      if (!counted) client.budget.deposit();
      counted = true;
      const started = performance.now();
      let response: UpstreamResponse;
      try {
        response = await (request.once ? key.pool : key.dispatcher).request<unknown>({
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
      this.metrics?.observeUpstream(channel.id, response.statusCode, (performance.now() - started) / 1000);
      if (client.keyPool) {
        this.metrics?.countKeyAttempt(channel.id, key.label, response.statusCode);
        if (response.statusCode === 401 || response.statusCode === 429) {
          moved ??= { tried: new Set() };
          const next = await this.refused(route, request, client.keyPool, key, response, moved, body);
          if (next) {
            key = next;
            continue;
          }
          if (response.statusCode === 401) {
            // The entries left are revoked: a 429 met on the way is the answer, else the channel cannot serve now.
            await response.body.dump();
            if (moved.limited) client.breaker.success();
            else client.breaker.abandon();
            throw moved.limited ?? allKeysRevoked(channel, client.keyPool);
          }
        } else if (response.statusCode < 400 && client.keyPool.served(key)) {
          this.log?.info({ channel: channel.id, key: key.label }, `channel "${channel.id}": key ${key.label} serves again`);
        }
      }
      // Overload (529; 429 is below 500) slows a channel down, it does not mean the channel is broken: the circuit stays as it is.
      if (response.statusCode === 529) client.breaker.abandon();
      else if (response.statusCode >= 500) client.breaker.failure();
      else client.breaker.success();
      if (response.statusCode >= 400) throw await upstreamHttpError(response, route, this.errorMessage(route, request.operation));
      return response;
    }
  }

  /** A key pool's entry whose token cannot be had rests as after a 429 without retry-after; the next entry, if any. */
  private untokened(channel: ChannelConfig, keyPool: KeyPool<KeyClient>, key: KeyClient, moved: KeyMoves, request: UpstreamRequest): KeyClient | undefined {
    const refusal = keyPool.refused(key, 0, undefined);
    this.metrics?.countKeyRest(channel.id, key.label, refusal.state);
    moved.tried.add(key);
    return request.signal?.aborted ? undefined : keyPool.pick(moved.tried, !!moved.limited);
  }

  /**
   * A key pool's entry refused (401 or 429): it rests (a 401 as revoked, logged once), and the next entry that can serve
   * is returned, or undefined when the request cannot move (no entry left, a body that cannot be sent again, the call
   * aborted). A 429 that is moved past is kept, to answer with when the only entries left are revoked.
   */
  private async refused(route: ModelRoute, request: UpstreamRequest, keyPool: KeyPool<KeyClient>, key: KeyClient, response: UpstreamResponse, moved: KeyMoves, body: unknown): Promise<KeyClient | undefined> {
    const channel = route.channel.id;
    const refusal = keyPool.refused(key, response.statusCode, response.headers['retry-after']);
    this.metrics?.countKeyRest(channel, key.label, refusal.state);
    if (refusal.changed) this.log?.warn({ channel, key: key.label, status: 401, restSeconds: refusal.seconds }, `channel "${channel}": the upstream refused key ${key.label} (401); it rests ${refusal.seconds} s while the pool's other keys serve`);
    moved.tried.add(key);
    const next = body instanceof Readable || request.signal?.aborted ? undefined : keyPool.pick(moved.tried, !!moved.limited || response.statusCode === 429);
    if (!next) return undefined;
    if (response.statusCode === 429) moved.limited = await upstreamHttpError(response, route, this.errorMessage(route, request.operation));
    else await response.body.dump();
    return next;
  }

  /**
   * Tries each route in order until one answers; only failures that happened before any answer
   * (unreachable, 5xx, 429) move on to the next route of a fallback group.
   */
  async sendFirst(routes: readonly ModelRoute[], build: (route: ModelRoute, index: number) => UpstreamRequest, watcher?: AttemptWatcher): Promise<{ route: ModelRoute; response: UpstreamResponse }> {
    if (routes[0]?.via) return this.sendRouted(routes, build, watcher);
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

  /**
   * A route's attempts, in the order its strategy ranked them: a cooling target is skipped (tried last, only when no
   * other target was), a target whose mapping refuses the request is skipped, and a failure moves on only when nothing
   * reached the upstream or the route's `failover.on` names it (never, for a request sent `once`, when it may have run).
   */
  private async sendRouted(routes: readonly ModelRoute[], build: (route: ModelRoute, index: number) => UpstreamRequest, watcher: AttemptWatcher | undefined): Promise<{ route: ModelRoute; response: UpstreamResponse }> {
    const { router, metrics } = this;
    let lastError: unknown;
    let cooled: number[] | undefined;
    let tried = false;
    for (let turn = 0; turn < routes.length + (cooled?.length ?? 0); turn++) {
      const index = turn < routes.length ? turn : cooled![turn - routes.length];
      const route = routes[index];
      const { route: node, target } = route.via!;
      const state = router.target(target);
      if (turn < routes.length && node.cooldown && (await router.cooling(target, state))) {
        (cooled ??= []).push(index);
        metrics?.countRouteAttempt(node.id, target, 'skipped');
        continue;
      }
      if (turn >= routes.length && tried) break;
      let request: UpstreamRequest;
      try {
        request = build(route, index);
      } catch (err) {
        // A field this target cannot carry: the next target may take the request; the first refusal answers if none does.
        if (!(err instanceof GatewayError) || err.statusCode !== 400) throw err;
        lastError ??= err;
        metrics?.countRouteAttempt(node.id, target, 'skipped');
        watcher?.attempted?.({ channel: route.channel.id, model: route.model.id, status: 400, latencyMs: 0 });
        continue;
      }
      tried = true;
      state.inFlight++;
      const started = router.now();
      try {
        const response = await this.send(route, request);
        const ms = router.now() - started;
        state.observeLatency(ms, router.now());
        metrics?.observeRouteTarget(node.id, target, ms / 1000);
        metrics?.countRouteAttempt(node.id, target, 'answered');
        watcher?.attempted?.({ channel: route.channel.id, model: route.model.id, status: response.statusCode, latencyMs: ms });
        watcher?.holdUntilDone(() => state.inFlight--);
        if (!watcher) state.inFlight--;
        return { route, response };
      } catch (err) {
        state.inFlight--;
        const ms = router.now() - started;
        if ((err as GatewayError).code === 'upstream_timeout') state.observeLatency(ms, router.now());
        metrics?.countRouteAttempt(node.id, target, 'failed');
        watcher?.attempted?.({ channel: route.channel.id, model: route.model.id, status: (err as GatewayError).upstreamStatus ?? (err as GatewayError).statusCode ?? 502, latencyMs: ms });
        lastError = err;
        if (request.signal?.aborted) throw err;
        if (!nothingSent(err) && (request.once || !node.movesOn(err))) throw err;
        if (node.cooldown && router.failed(target, state, node.cooldown)) metrics?.countRouteCooldown(node.id, target);
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

  /** Route targets' state in this process, made on first use (a config without routes never makes it). */
  get router(): RouterState {
    return (this.routerState ??= new RouterState(this.now, this.cooldowns));
  }

  /** The attempts of one request to a route, best first, by its strategy and what this process knows of its targets. */
  routeAttempts(node: RouteNode, request: RoutingRequest | undefined): ModelRoute[] {
    return attemptsOf(node, this.router, request);
  }

  /** Each key pool entry's state by channel, for /readyz and /metrics; entries of channels not called yet serve. */
  keyStates(): Record<string, Record<string, KeyState>> {
    const states: Record<string, Record<string, KeyState>> = {};
    for (const channel of this.config.channels) {
      if (!channel.keyPool) continue;
      const keyPool = this.clients.get(channel.id)?.keyPool;
      states[channel.id] = Object.fromEntries(keyPool ? keyPool.states().map(({ entry, state }) => [entry.label, state]) : channel.keyPool.map((entry) => [entry.label, 'serving']));
    }
    return states;
  }

  /** Each channel's circuit, for /readyz and /metrics; channels not called yet are closed. */
  circuits(): Record<string, CircuitState> {
    return Object.fromEntries(this.config.channels.map((c) => [c.id, this.clients.get(c.id)?.breaker.state ?? 'closed']));
  }

  async close(): Promise<void> {
    await Promise.all([...this.clients.values()].flatMap((c) => c.pools.map((pool) => pool.close())));
  }
}

/** What a request has met on a key pool so far: the entries tried, and a 429 it moved past. */
interface KeyMoves {
  tried: Set<KeyClient>;
  limited?: Error;
}

/** Every entry of a key pool rests as revoked (401): the channel cannot serve until one is tried again. */
function allKeysRevoked(channel: ChannelConfig, keyPool: KeyPool<KeyClient>): ChannelUnavailableError {
  const wait = keyPool.retryInSeconds();
  return new ChannelUnavailableError(`channel "${channel.id}": the upstream refused every key of its pool (401); the next is tried in ${wait} s`, wait);
}

/** Failures while connecting: the request never left the gateway. */
const connectFailures = new Set(['UND_ERR_CONNECT_TIMEOUT', 'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

export function upstreamTransportError(err: unknown, channel: string): Error {
  if (err instanceof GatewayError) return err;
  if ((err as Error)?.name === 'AbortError') return err as Error;
  const code = (err as { code?: string })?.code;
  let error: UpstreamError;
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || err instanceof undiciErrors.HeadersTimeoutError) {
    error = new UpstreamError(`channel "${channel}" timed out`, 504, 'upstream_timeout');
  } else {
    error = new UpstreamError(`channel "${channel}" is unreachable`, 502, 'upstream_unreachable');
    error.transport = transportCause(err);
  }
  error.nothingSent = code !== undefined && connectFailures.has(code);
  return error;
}
