// The routes stage: route files (routes.dir) checked against the routed models and against each other, then built into
// route nodes whose targets are attempts the pipeline already knows how to run (a model's routes, each marked with the
// route and target it came through). Every problem is reported at its own file:line:col.
import { clientValue } from '../base/errors.js';
import { routeCachePolicy } from './cache.js';
import { catalogueOperations, checkCacheFamilies } from './cross-check-operations.js';
import { failoverRule } from './failover.js';
import type { Problems } from './problems.js';
import type { ChannelConfig, EndpointConfig, ModelRoute, RouteNode, RouteSchema, RouteTarget } from './types.js';
import type { ValidatedFile } from './validate.js';
import type { YamlSource } from './yaml-source.js';

/** The `failover.on` entry that moves on from a chat answer a content filter stopped. */
const CONTENT_FILTER = 'content_filter';

interface Declared {
  route: RouteSchema;
  source: YamlSource;
  pointer: string;
}

interface RoutedModels {
  channels: ChannelConfig[];
  models: Map<string, ModelRoute[]>;
  aliases: Map<string, string>;
  /** The catalogue's endpoints: which kinds of model the chat flow serves (text a stream continues, a content filter). */
  endpoints: readonly EndpointConfig[];
}

/** The model kinds the catalogue serves through the chat flow (its entries of `pipeline.flow: chat`). */
const chatKindsOf = (endpoints: readonly EndpointConfig[]) => new Set(endpoints.flatMap((e) => (e.pipeline?.flow === 'chat' && e.modelKind ? [e.modelKind] : [])));

/** Every route a file declares, with where it is (a file holds one route or a list). */
function declared(files: ValidatedFile<RouteSchema | RouteSchema[]>[]): Declared[] {
  const all: Declared[] = [];
  for (const { source, value } of files) {
    if (!value) continue;
    if (Array.isArray(value)) value.forEach((route, index) => all.push({ route, source, pointer: `/${index}` }));
    else all.push({ route: value, source, pointer: '' });
  }
  return all;
}

/** The routes of a target's `model`: an id or alias (every channel serving it), or `channel/model` (that channel's only). */
function modelTarget(name: string, routed: RoutedModels): ModelRoute[] | undefined {
  const byId = routed.models.get(name) ?? routed.models.get(routed.aliases.get(name) ?? '');
  if (byId) return byId;
  const slash = name.indexOf('/');
  if (slash < 0) return undefined;
  const channel = name.slice(0, slash);
  const model = name.slice(slash + 1);
  const id = routed.models.has(model) ? model : routed.aliases.get(model);
  const one = id ? routed.models.get(id)?.filter((r) => r.channel.id === channel) : undefined;
  return one?.length ? one : undefined;
}

/** The first route id on a cycle through `id`'s route targets, with the chain that closes it; undefined when none. */
function findCycle(id: string, byId: Map<string, Declared>, path: string[] = []): string[] | undefined {
  if (path.includes(id)) return [...path.slice(path.indexOf(id)), id];
  const entry = byId.get(id);
  if (!entry) return undefined;
  for (const target of entry.route.targets) {
    if (target.route === undefined) continue;
    const cycle = findCycle(target.route, byId, [...path, id]);
    if (cycle) return cycle;
  }
  return undefined;
}

/** What every check of one route found wrong, reported at its place; true when the route can be built. */
function checkRoute(entry: Declared, byId: Map<string, Declared>, routed: RoutedModels, problems: Problems): boolean {
  const { route, source, pointer } = entry;
  const before = problems.list.length;
  if (routed.models.has(route.id) || routed.aliases.has(route.id)) problems.add(source, `${pointer}/id`, `${clientValue(route.id)} is a model id or alias a channel serves; a route needs a name of its own`);
  if (byId.get(route.id) !== entry) problems.add(source, `${pointer}/id`, `route ${clientValue(route.id)} is declared twice`);
  if (route.strategy === 'sticky' && !route.stickyKey) problems.add(source, `${pointer}/strategy`, 'a sticky route needs a stickyKey (key, user or header:<name>)');
  if (route.stickyKey && route.strategy !== 'sticky') problems.add(source, `${pointer}/stickyKey`, 'stickyKey is read only by strategy: sticky');
  const semantic = route.cache?.semantic?.model;
  if (semantic !== undefined && !routed.models.has(semantic) && !routed.aliases.has(semantic)) problems.add(source, `${pointer}/cache/semantic/model`, `no channel serves model ${clientValue(semantic)}: the semantic cache needs an embeddings model of this gateway`);
  checkCacheFamilies(route.cache?.families, catalogueOperations(routed.endpoints), source, `${pointer}/cache/families`, problems);
  if (route.cache?.hitsPastCap && (route.cache.hitPrice ?? 'free') !== 'free') problems.add(source, `${pointer}/cache/hitsPastCap`, 'hitsPastCap serves hits past a spent cap, so only free ones: set hitPrice: free or drop it');
  route.failover.on.forEach((rule, index) => {
    if (typeof rule === 'number' && rule < 400) problems.add(source, `${pointer}/failover/on/${index}`, `${rule} is not an error status`);
    // Any other word is an upstream error code; one spelled like a word the gateway gives a meaning to is a slip.
    const meant = typeof rule === 'string' && rule !== CONTENT_FILTER && rule.toLowerCase().replace(/[^a-z]/g, '') === 'contentfilter';
    if (meant) problems.add(source, `${pointer}/failover/on/${index}`, `${clientValue(rule)} is not a failover name: a content filter's answer is ${CONTENT_FILTER}`);
  });
  route.targets.forEach((target, index) => {
    const at = `${pointer}/targets/${index}`;
    if ((target.model === undefined) === (target.route === undefined)) problems.add(source, at, 'a target names a model or a route (one of them)');
    if (target.model !== undefined && !modelTarget(target.model, routed)) {
      problems.add(source, `${at}/model`, `no channel serves model ${clientValue(target.model)} (a model id or alias, or channel/model)`);
    }
    if (target.route !== undefined) {
      if (!byId.has(target.route)) problems.add(source, `${at}/route`, `no route ${clientValue(target.route)}`);
      else if (target.route === route.id || findCycle(target.route, byId, [route.id])) {
        const cycle = findCycle(route.id, byId) ?? [route.id, route.id];
        problems.add(source, `${at}/route`, `routes form a cycle: ${cycle.join(' -> ')}`);
      }
    }
  });
  return problems.list.length === before;
}

/** A model's routes as a route's attempts: each marked with the route and the target (`channel/model`) it came through. */
function attemptsOf(routes: ModelRoute[], node: RouteNode): ModelRoute[] {
  const enabled = routes.filter((r) => !r.channel.disabledReason);
  // A target whose channels are all disabled stays, so the answer says why rather than "no target".
  return (enabled.length ? enabled : routes).map((r) => ({ ...r, via: { route: node, target: `${r.channel.id}/${r.model.id}` } }));
}

/** The cheapest price a target can be served at, per million input plus output tokens (the cost strategy's order). */
function priceOf(routes: readonly ModelRoute[]): number {
  return Math.min(...routes.map(({ model: { price } }) => (price.inputPerMillion ?? 0) + (price.outputPerMillion ?? 0) + (price.perRequest ?? 0) * 1e6 + (typeof price.perImage === 'number' ? price.perImage * 1e6 : 0)));
}

/**
 * Builds every route whose checks held, children first; a route built twice (several parents) is one node. Returns
 * the nodes by id; a route that failed a check, or leads to one, is left out (its problems fail the load).
 */
export function buildRoutes(files: ValidatedFile<RouteSchema | RouteSchema[]>[], routed: RoutedModels, problems: Problems): Map<string, RouteNode> {
  const all = declared(files);
  const byId = new Map<string, Declared>();
  for (const entry of all) if (!byId.has(entry.route.id)) byId.set(entry.route.id, entry);
  const sound = new Set(all.filter((entry) => checkRoute(entry, byId, routed, problems)).map((e) => e.route));
  const chatKinds = chatKindsOf(routed.endpoints);
  const nodes = new Map<string, RouteNode>();
  const build = (entry: Declared): RouteNode | undefined => {
    const { route, source, pointer } = entry;
    if (!sound.has(route)) return undefined;
    const done = nodes.get(route.id);
    if (done) return done;
    const node: RouteNode = {
      id: route.id,
      file: source.file,
      strategy: route.strategy,
      stickyKey: route.stickyKey,
      movesOn: failoverRule(route.failover.on),
      ...(route.failover.on.includes(CONTENT_FILTER) ? { contentFilter: true } : {}),
      streamFailover: route.failover.streamAfterFirstByte ? { idleMs: route.failover.streamIdleMs } : undefined,
      cooldown: route.cooldown,
      ...(route.cache ? { cache: routeCachePolicy(route.cache) } : {}),
      targets: [],
      reachable: [],
      kind: '', // its targets' kind, set below once they are built
    };
    for (const target of route.targets) {
      const child = target.route !== undefined ? build(byId.get(target.route)!) : undefined;
      if (target.route !== undefined && !child) return undefined;
      const attempts = child ? child.reachable : attemptsOf(modelTarget(target.model!, routed)!, node);
      const built: RouteTarget = { name: target.route ?? target.model!, weight: target.weight, route: child, attempts, price: priceOf(attempts) };
      node.targets.push(built);
    }
    const seen = new Set<string>();
    for (const target of node.targets) {
      for (const attempt of target.attempts) {
        if (seen.has(attempt.via!.target)) continue;
        seen.add(attempt.via!.target);
        node.reachable.push(attempt);
      }
    }
    if (!checkReachable(node, entry, chatKinds, problems)) return undefined;
    nodes.set(route.id, node);
    return node;
  };
  for (const entry of all) build(entry);
  for (const node of nodes.values()) freezeNode(node);
  return nodes;
}

/**
 * The checks a route's reachable targets answer: they serve one kind of model (the route's, set here), a chat kind where
 * failover moves on from a content filter, and continue a stream where the route continues streams. False when one fails.
 */
function checkReachable(node: RouteNode, { route, source, pointer }: Declared, chatKinds: ReadonlySet<string>, problems: Problems): boolean {
  const kinds = new Set(node.reachable.map((r) => r.model.kind));
  if (kinds.size > 1) {
    problems.add(source, `${pointer}/targets`, `targets serve different kinds of model (${[...kinds].join(', ')}); a route serves one`);
    return false;
  }
  node.kind = node.reachable[0].model.kind;
  if (node.contentFilter && !chatKinds.has(node.kind)) {
    problems.add(source, `${pointer}/failover/on/${route.failover.on.indexOf(CONTENT_FILTER)}`, `${CONTENT_FILTER} moves on from a chat answer a content filter stopped; this route serves ${node.kind} models`);
    return false;
  }
  const stuck = node.streamFailover && node.reachable.find((r) => !continuesStreams(r, chatKinds));
  if (stuck) {
    problems.add(source, `${pointer}/failover/streamAfterFirstByte`, `target ${stuck.channel.id}/${stuck.model.id} cannot continue a stream (a chat model on a protocol that streams answers); only a chat route's text streams are continued`);
    return false;
  }
  return true;
}

/** Whether a route's attempt can continue a broken text stream: a chat model whose channel serves an operation that streams. */
function continuesStreams(route: ModelRoute, chatKinds: ReadonlySet<string>): boolean {
  const served = Object.entries(route.protocol.operations).filter(([name]) => !route.channel.operations || route.channel.operations.includes(name));
  return chatKinds.has(route.model.kind) && served.some(([, op]) => op.streamFlag !== undefined || op.streamOperation !== undefined || op.response === 'sse' || op.response === 'stream');
}

/**
 * Freezes a built route: its attempts point back at it (via.route), a loop the config's deep freeze would follow for
 * ever, so each route is frozen here, shallowly, and the loader's freeze stops at it.
 */
function freezeNode(node: RouteNode): void {
  for (const attempt of node.reachable) {
    Object.freeze(attempt.via);
    Object.freeze(attempt);
  }
  for (const target of node.targets) {
    Object.freeze(target.attempts);
    Object.freeze(target);
  }
  Object.freeze(node.targets);
  Object.freeze(node.reachable);
  Object.freeze(node);
}
