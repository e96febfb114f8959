// What a reload would change, said plainly: the catalogue's routes are registered when the gateway starts (a new or
// changed entry needs a restart, so such a reload is refused, naming the entries); channels, protocols, the operator's
// request schemas and most settings apply at once. A reload that changes nothing says so instead of "reloaded".
import type { LoadedConfig } from '../engine/loaded-config.js';
import type { EndpointConfig } from '../config/types.js';
import { displayPath } from '../config/yaml-source.js';

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Each id of `before` and `next` that was added, removed or changed, as "<noun> "id" added|removed|changed". */
function changedIds<T>(noun: string, before: Map<string, T>, next: Map<string, T>): string[] {
  const changes: string[] = [];
  for (const [id, value] of next) if (!before.has(id)) changes.push(`${noun} "${id}" added`);
  else if (!same(before.get(id), value)) changes.push(`${noun} "${id}" changed`);
  for (const id of before.keys()) if (!next.has(id)) changes.push(`${noun} "${id}" removed`);
  return changes;
}

const byName = (endpoints: readonly EndpointConfig[]) => new Map(endpoints.map((e) => [e.name, e]));

/**
 * The catalogue entries (and task family routes) a reload cannot apply: routes, their body limits and handlers are
 * built once, at start. Each problem names the entry and says a restart applies it.
 */
export function catalogueNeedingRestart(before: LoadedConfig, next: LoadedConfig): string[] {
  return changedIds('endpoint', byName(before.endpoints), byName(next.endpoints)).map(
    (change) => `${displayPath(next.file)}: ${change}: the catalogue's routes are registered when the gateway starts; restart it to apply this (the running config keeps serving)`,
  );
}

/** What the channel's state is, for a reload's answer: serving, or why not (no secret is in it). */
const stateOf = (channel: LoadedConfig['channels'][number]) => channel.disabledReason ?? 'enabled';

/** What a reload applies: channels (their files, and enabled or disabled as their variables now say), protocols, request schemas, settings. */
export function reloadChanges(before: LoadedConfig, next: LoadedConfig): string[] {
  // A channel's file, without what the environment decided (its credential read in, why it is disabled): said below.
  const fileOf = ({ disabledReason: _d, auth: _a, secretValues: _s, credentialValue: _c, secretValue: _v, ...file }: LoadedConfig['channels'][number]) => file;
  const channels = (config: LoadedConfig) => new Map(config.channels.map((c) => [c.id, fileOf(c)]));
  const changes = changedIds('channel', channels(before), channels(next));
  for (const channel of next.channels) {
    const was = before.channels.find((c) => c.id === channel.id);
    if (was && stateOf(was) !== stateOf(channel)) changes.push(channel.disabledReason ? channel.disabledReason : `channel "${channel.id}" is enabled`);
    else if (was && !channel.disabledReason && !same(was.auth, channel.auth)) changes.push(`channel "${channel.id}": its credential changed`);
  }
  const protocols = (config: LoadedConfig) => new Map([...config.protocols].map(([id, p]) => [id, p]));
  changes.push(...changedIds('protocol', protocols(before), protocols(next)));
  changes.push(...changedIds('request schema', before.operatorSchemas, next.operatorSchemas));
  // A route as declared: its strategy, cooldown and targets by name and weight (a target route is named, not walked).
  const routes = (config: LoadedConfig) => new Map([...(config.routes ?? new Map())].map(([id, r]) => [id, { strategy: r.strategy, stickyKey: r.stickyKey, cooldown: r.cooldown, targets: r.targets.map((t) => [t.name, t.weight]), reachable: r.reachable.map((a) => `${a.channel.id}/${a.model.id}`) }]));
  changes.push(...changedIds('route', routes(before), routes(next)));
  changes.push(...changedIds('guardrail', new Map(before.guardrails?.declared ?? []), new Map(next.guardrails?.declared ?? [])));
  if (!same(before.gateway, next.gateway)) changes.push('settings');
  return [...new Set(changes)];
}
