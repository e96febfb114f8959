// A routed request's send loop: the route's targets in the order its strategy ranked them, cooling ones skipped, each attempt counted and timed.
import type { ModelRoute } from '../../config/types.js';
import { nothingSent } from '../../config/failover.js';
import { GatewayError } from '../../base/errors.js';
import type { Metrics } from '../../base/metrics.js';
import type { UpstreamRequest, UpstreamResponse } from '../upstream-request.js';
import type { RouterState } from './target-states.js';

/** One attempt at a route's target, as the request log lists it. */
export interface AttemptRecord {
  channel: string;
  model: string;
  status: number;
  latencyMs: number;
  /** What this attempt was charged, where a call settles several answering attempts (a stream continued on another target). */
  costMicros?: number;
  /** Why an answering attempt was not the last: its stream broke and another target continued it (an error code), or a content filter stopped it (`content_filter`). */
  broken?: string;
}

/** What a call lends a routed send: where its attempts are recorded, and a hold on the answering target until the call ends. */
export interface AttemptWatcher {
  attempted?(record: AttemptRecord): void;
  holdUntilDone(release: () => void): void;
}

/** What a routed send takes of the upstream client: its router state, its metrics, and one send to a route's channel. */
export interface RoutedSendDeps {
  router: RouterState;
  metrics?: Metrics;
  send(route: ModelRoute, request: UpstreamRequest): Promise<UpstreamResponse>;
}

/**
 * A route's attempts, in the order its strategy ranked them: a cooling target is skipped (tried last, only when no
 * other target was), a target whose mapping refuses the request is skipped, and a failure moves on only when nothing
 * reached the upstream or the route's `failover.on` names it (never, for a request sent `once`, when it may have run).
 */
export async function sendRouted(deps: RoutedSendDeps, routes: readonly ModelRoute[], build: (route: ModelRoute, index: number) => UpstreamRequest, watcher: AttemptWatcher | undefined): Promise<{ route: ModelRoute; response: UpstreamResponse; attempt: AttemptRecord }> {
  const { router, metrics } = deps;
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
      const response = await deps.send(route, request);
      const answeredAt = router.now();
      const ms = answeredAt - started;
      state.observeLatency(ms, answeredAt);
      metrics?.observeRouteTarget(node.id, target, ms / 1000);
      metrics?.countRouteAttempt(node.id, target, 'answered');
      const attempt: AttemptRecord = { channel: route.channel.id, model: route.model.id, status: response.statusCode, latencyMs: ms };
      watcher?.attempted?.(attempt);
      watcher?.holdUntilDone(state.release);
      if (!watcher) state.inFlight--;
      return { route, response, attempt };
    } catch (err) {
      state.inFlight--;
      const failedAt = router.now();
      const ms = failedAt - started;
      if ((err as GatewayError).code === 'upstream_timeout') state.observeLatency(ms, failedAt);
      metrics?.countRouteAttempt(node.id, target, 'failed');
      watcher?.attempted?.({ channel: route.channel.id, model: route.model.id, status: (err as GatewayError).upstreamStatus ?? (err as GatewayError).statusCode ?? 502, latencyMs: ms });
      lastError = err;
      if (request.signal?.aborted) throw err;
      if (!nothingSent(err) && (request.once || !node.movesOn(err))) throw err;
      // A content filter judges the request, not the target: it cools nothing.
      if (node.cooldown && (err as GatewayError).code !== 'content_filter' && router.failed(target, state, node.cooldown)) metrics?.countRouteCooldown(node.id, target);
    }
  }
  throw lastError;
}
