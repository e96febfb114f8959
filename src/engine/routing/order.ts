// The strategies: each ranks a route's targets for one request; the attempts follow in that order (the first answers,
// the rest are its failover), a route target expanded into its own ranked attempts, each target once.
import type { ModelRoute, RouteNode, RouteTarget } from '../../config/types.js';
import type { RouterState } from './target-states.js';

/** What the sticky strategy may read of a request. */
export interface RoutingRequest {
  readonly auth: { keyId: string };
  readonly body: Record<string, unknown>;
  readonly headers: Record<string, string | string[] | undefined>;
}

/** Every latency-routed route sends this one request in so many to the target heard from least recently, so a slow target that recovered is seen to. */
const PROBE_EVERY = 8;

type Rank = (node: RouteNode, state: RouterState, request: RoutingRequest | undefined) => readonly RouteTarget[];

const sumInFlight = (target: RouteTarget, state: RouterState) => target.attempts.reduce((n, a) => n + state.target(a.via!.target).inFlight, 0);

function latencyOf(target: RouteTarget, state: RouterState): number {
  let best = Infinity;
  for (const attempt of target.attempts) best = Math.min(best, state.target(attempt.via!.target).latencyMs ?? 0);
  return best;
}

const sampledAt = (target: RouteTarget, state: RouterState) => Math.min(...target.attempts.map((a) => state.target(a.via!.target).sampledAt));

/** `first` ahead, the rest as listed. */
function leading(targets: readonly RouteTarget[], first: number): RouteTarget[] {
  return first === 0 ? [...targets] : [targets[first], ...targets.slice(0, first), ...targets.slice(first + 1)];
}

/** Sorted by `score`, lowest first; ties keep the listed order. */
function by(targets: readonly RouteTarget[], score: (t: RouteTarget) => number): RouteTarget[] {
  return targets.map((t, i) => ({ t, i, s: score(t) })).sort((a, b) => a.s - b.s || a.i - b.i).map(({ t }) => t);
}

/** FNV-1a of a string, as a number in (0, 1]. */
function unitHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return ((hash >>> 0) + 1) / 0x100000000;
}

/** What a sticky route hashes a request by; undefined when the request does not carry it. */
function stickyValue(key: string, request: RoutingRequest | undefined): string | undefined {
  if (!request) return undefined;
  if (key === 'key') return request.auth.keyId;
  if (key === 'user') {
    const user = request.body.user ?? (request.body.metadata as { user_id?: unknown } | undefined)?.user_id;
    return typeof user === 'string' && user ? user : undefined;
  }
  const value = request.headers[key.slice('header:'.length).toLowerCase()];
  return typeof value === 'string' && value ? value : undefined;
}

const weighted: Rank = (node, state) => leading(node.targets, state.nextByWeight(node));

const ranks: Record<RouteNode['strategy'], Rank> = {
  ordered: (node) => node.targets,
  weighted,
  'least-busy': (node, state) => by(node.targets, (t) => sumInFlight(t, state)),
  latency: (node, state) => (state.count(node) % PROBE_EVERY === 0 ? by(node.targets, (t) => sampledAt(t, state)) : by(node.targets, (t) => latencyOf(t, state))),
  cost: (node) => by(node.targets, (t) => t.price),
  // Weighted rendezvous hashing: one key keeps its target while the target list stays; a removed target moves only its own keys.
  sticky: (node, state, request) => {
    const value = stickyValue(node.stickyKey!, request);
    if (value === undefined) return weighted(node, state, request);
    return by(node.targets, (t) => Math.log(unitHash(`${value}\u0000${t.name}`)) / -t.weight);
  },
};

/** A route's attempts whose order needs nothing of the request or of the targets' state: those of an ordered or cost route over models or such routes. */
const isFixed = (node: RouteNode): boolean => (node.strategy === 'ordered' || node.strategy === 'cost') && node.targets.every((t) => !t.route || isFixed(t.route));

/**
 * What a route's ranking makes of the same targets on every request, made on its first: its one order (ordered, cost),
 * or one order for each target a weighted route may put first; null where the order is the request's own (the other
 * strategies, or a weighted route over a route that is not fixed). A request to a route then allocates nothing to rank it.
 */
interface Precomputed {
  readonly always?: readonly ModelRoute[];
  readonly byLead?: readonly (readonly ModelRoute[])[];
}

const precomputed = new WeakMap<RouteNode, Precomputed | null>();

function precompute(node: RouteNode): Precomputed | null {
  // The ranks of a fixed route read no state and no request: ranking it once, with none, is every request's ranking.
  const noState = undefined as unknown as RouterState;
  if (isFixed(node)) return { always: Object.freeze(expand(ranks[node.strategy](node, noState, undefined), noState, undefined)) };
  if (node.strategy === 'weighted' && node.targets.every((t) => !t.route || isFixed(t.route))) {
    return { byLead: Object.freeze(node.targets.map((_, first) => Object.freeze(expand(leading(node.targets, first), noState, undefined)))) };
  }
  return null;
}

/** The attempts of one request to `node`, best first, each target (`channel/model`) once. */
export function attemptsOf(node: RouteNode, state: RouterState, request: RoutingRequest | undefined): readonly ModelRoute[] {
  let known = precomputed.get(node);
  if (known === undefined) precomputed.set(node, (known = precompute(node)));
  if (known?.always) return known.always;
  if (known?.byLead) return known.byLead[state.nextByWeight(node)];
  return expand(ranks[node.strategy](node, state, request), state, request);
}

/** Ranked targets as attempts: a route target expanded into its own ranked attempts, each target (`channel/model`) once. */
function expand(targets: readonly RouteTarget[], state: RouterState, request: RoutingRequest | undefined): ModelRoute[] {
  const attempts: ModelRoute[] = [];
  const seen = new Set<string>();
  for (const target of targets) {
    for (const attempt of target.route ? attemptsOf(target.route, state, request) : target.attempts) {
      if (seen.has(attempt.via!.target)) continue;
      seen.add(attempt.via!.target);
      attempts.push(attempt);
    }
  }
  return attempts;
}
