// Talks to channels: one undici pool per channel with connect, header and body timeouts; upstream failures become typed errors.
// The pipeline's send stage (src/pipeline/send.ts) encodes bodies and sets deadlines; this module only moves bytes.
import type { Dispatcher } from 'undici';
import type { ChannelConfig, ModelRoute, RouteNode } from '../config/types.js';
import { attemptsOf, type RoutingRequest } from './routing/order.js';
import { RouterState } from './routing/target-states.js';
import type { CooldownShare } from './routing/cooldown-share.js';
import { sendRouted, type AttemptRecord, type AttemptWatcher, type RoutedSendDeps } from './routing/routed-send.js';
import type { LoadedConfig } from './loaded-config.js';
import { ChannelUnavailableError, channelNotConfigured, GatewayError, UpstreamError } from '../base/errors.js';
import type { Metrics } from '../base/metrics.js';
import { TokenCaches } from './credentials/token-cache.js';
import { authenticated } from './credentials/outgoing.js';
import type { KeyState } from './credentials/key-pool.js';
import { allKeysRevoked, KeyMoves, type UpstreamLog } from './credentials/key-moves.js';
import { channelClient, type ChannelClient, type KeyClient } from './channel-client.js';
import { renderer } from './translate/render.js';
import type { CircuitState } from './resilience.js';
import { commonErrorMessage, upstreamHttpError, upstreamTransportError } from './upstream-errors.js';
import type { UpstreamRequest, UpstreamResponse } from './upstream-request.js';
import { callUpstream } from './upstream-call.js';

export { sanitizeUpstreamMessage, upstreamErrorOf, upstreamHttpError, upstreamTransportError } from './upstream-errors.js';
export type { UpstreamRequest, UpstreamResponse } from './upstream-request.js';
export type { AttemptRecord, AttemptWatcher } from './routing/routed-send.js';
export type { UpstreamLog } from './credentials/key-moves.js';

/** A request's headers and body as authenticated for one key. */
type Outgoing = Awaited<ReturnType<typeof authenticated>>;

export class Upstreams {
  private readonly clients = new Map<string, ChannelClient>();
  /** Tokens by credential: channels that hold the same credential (client and scope, service account) share one. */
  private readonly tokenCaches: TokenCaches;
  /** What this process knows of route targets (in flight, latency, cooldowns); made for the first routed request. */
  private routerState?: RouterState;
  private routedDeps?: RoutedSendDeps;

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

  /** A channel's client, made on its first request and kept. */
  private client(channel: ChannelConfig): ChannelClient {
    let client = this.clients.get(channel.id);
    if (!client) this.clients.set(channel.id, (client = channelClient(channel, { config: this.config, metrics: this.metrics, now: this.now, tokenCaches: this.tokenCaches })));
    return client;
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
      throw allKeysRevoked(channel.id, client.keyPool!);
    }
    const moves = client.keyPool && new KeyMoves(channel.id, client.keyPool, this.metrics, this.log);
    let key: KeyClient = first;
    let counted = false;
    for (;;) {
      const fullPath = request.originPath ?? `${key.basePath}${path}${query}`;
      // Authenticated before the call counts against the channel: a token that cannot be had is a 502 of its own (on a
      // key pool, the entry rests and the next one is tried). The request's deadline covers the token fetch too: a
      // hanging token endpoint is the call's 504 at its deadline.
      let outgoing: Outgoing;
      try {
        const origin = key.origin;
        const pending = authenticated(key.auth, () => new URL(fullPath, origin), method, { ...key.headers, ...request.headers }, request.body ?? undefined, request.signal);
        outgoing = pending instanceof Promise ? await pending : pending;
      } catch (err) {
        const next: KeyClient | undefined = moves && err instanceof UpstreamError && err.code === 'upstream_auth_failed' ? moves.untokened(key, !!request.signal?.aborted) : undefined;
        if (!next) throw err;
        key = next;
        continue;
      }
      if (!counted) client.budget.deposit();
      counted = true;
      const response = await this.dispatch(channel, client, key, request, method, fullPath, outgoing);
      // Awaited only on a key pool: a single key costs no turn of the microtask queue here.
      const next = moves && (await moves.answered(key, response, outgoing.body, !!request.signal?.aborted, () => upstreamHttpError(response, route, this.errorMessage(route, request.operation)), client.breaker));
      if (next) {
        key = next;
        continue;
      }
      // Overload (529; 429 is below 500) slows a channel down, it does not mean the channel is broken: the circuit stays as it is.
      if (response.statusCode === 529) client.breaker.abandon();
      else if (response.statusCode >= 500) client.breaker.failure();
      else client.breaker.success();
      if (response.statusCode >= 400) throw await upstreamHttpError(response, route, this.errorMessage(route, request.operation));
      return response;
    }
  }

  /** One call with a key (its pool's retries composed on, unless sent once), timed; a transport failure counts against the circuit. */
  private async dispatch(channel: ChannelConfig, client: ChannelClient, key: KeyClient, request: UpstreamRequest, method: string, path: string, { headers, body }: Outgoing): Promise<UpstreamResponse> {
    const started = performance.now();
    let response: UpstreamResponse;
    try {
      response = await callUpstream(request.once ? key.pool : key.dispatcher, { method: method as Dispatcher.HttpMethod, path, headers, body, signal: request.signal });
    } catch (err) {
      if (request.signal?.aborted) client.breaker.abandon();
      else client.breaker.failure();
      throw upstreamTransportError(err, channel.id);
    }
    this.metrics?.observeUpstream(channel.id, response.statusCode, (performance.now() - started) / 1000);
    return response;
  }

  /**
   * Tries each route in order until one answers; only failures that happened before any answer
   * (unreachable, 5xx, 429) move on to the next route of a fallback group. A route's attempts go to its send loop
   * (routed-send.ts) directly: no async frame of this one around it.
   */
  sendFirst(routes: readonly ModelRoute[], build: (route: ModelRoute, index: number) => UpstreamRequest, watcher?: AttemptWatcher): Promise<{ route: ModelRoute; response: UpstreamResponse; attempt?: AttemptRecord }> {
    return routes[0]?.via ? sendRouted(this.routed, routes, build, watcher) : this.sendInOrder(routes, build);
  }

  private async sendInOrder(routes: readonly ModelRoute[], build: (route: ModelRoute, index: number) => UpstreamRequest): Promise<{ route: ModelRoute; response: UpstreamResponse }> {
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

  /** What the routed send loop takes of this client, made once. */
  private get routed(): RoutedSendDeps {
    return (this.routedDeps ??= { router: this.router, metrics: this.metrics, send: (route, request) => this.send(route, request) });
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

  /**
   * A routed answer broke after its first byte (its connection lost, an error event, no byte for streamIdleMs): a
   * failure of its target, counted toward its route's cooldown whether or not another target continued it.
   */
  answerBroke(route: ModelRoute): void {
    const via = route.via;
    if (!via?.route.cooldown) return;
    if (this.router.failed(via.target, this.router.target(via.target), via.route.cooldown)) this.metrics?.countRouteCooldown(via.route.id, via.target);
  }

  /**
   * The attempts of one request to a route, best first, by its strategy and what this process knows of its targets;
   * often an array shared by every request to the route (frozen: callers read it, as they read a model's routes).
   */
  routeAttempts(node: RouteNode, request: RoutingRequest | undefined): ModelRoute[] {
    return attemptsOf(node, this.router, request) as ModelRoute[];
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
