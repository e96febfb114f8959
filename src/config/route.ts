// The route stage: credentials read from the environment (a channel without them is disabled, with a warning), each model id
// routed to the channels that serve it in fallback order, and the endpoint list (the catalogue plus task family routes).
import type { CheckedFiles } from './cross-check.js';
import { chooseCredential, choosePool, credentialsOf, secretValuesOf } from './credentials.js';
import type { PoolEntry } from './credentials.js';
import type { ChannelConfig, EndpointConfig, ModelRoute, ProtocolConfig, TaskSpec } from './types.js';
import { displayPath } from './yaml-source.js';

export interface Routes {
  channels: ChannelConfig[];
  models: Map<string, ModelRoute[]>;
  /** Alias to the id of the model it names (schemas/model.schema.json `aliases`), for routed models only. */
  aliases: Map<string, string>;
  endpoints: EndpointConfig[];
}

/**
 * Reads the channel's variables and chooses its credential; says why the channel cannot serve when it cannot. Returns the
 * variables missing (summarised in one line by the caller); any other reason is a warning of its own.
 */
function resolveCredentials(channel: ChannelConfig, env: NodeJS.ProcessEnv, warnings: string[]): string | undefined {
  const disable = (reason: string) => (channel.disabledReason = `channel "${channel.id}" is disabled: ${reason}`);
  const unset = (channel.requiresEnv ?? []).filter((name) => !env[name]);
  const alternatives = credentialsOf(channel.credential);
  const choice = alternatives.length ? chooseCredential(alternatives, env) : channel.credentials ? poolChoice(channel, env, warnings) : undefined;
  let missing: string | undefined;
  if (unset.length) {
    disable(unset.length === 1 ? `environment variable ${unset[0]} is not set` : `environment variables ${unset.join(', ')} are not set`);
    missing = unset.join(', ');
  } else if (choice && 'problem' in choice) {
    disable(choice.problem);
    if (choice.missing) missing = choice.missing;
    else warnings.push(`${displayPath(channel.file)}: ${channel.disabledReason}`);
  } else if (choice && 'pool' in choice) {
    channel.keyPool = choice.pool;
    channel.secretValues = choice.pool.flatMap((entry) => secretValuesOf(entry.auth));
  } else if (choice) {
    channel.auth = choice.resolved;
    channel.secretValues = secretValuesOf(choice.resolved);
    if (choice.resolved.kind === 'static') {
      channel.credentialValue = choice.resolved.credential;
      channel.secretValue = choice.resolved.secret;
    }
  }
  if (!channel.enabled) channel.disabledReason ??= `channel "${channel.id}" is disabled in ${displayPath(channel.file)}`;
  return missing;
}

/**
 * A key pool's entries that serve; the ones that cannot are named on the startup log (variables only) and kept for
 * /readyz. A pool none of whose entries serves is a problem, like a credential whose variables are not set.
 */
function poolChoice(channel: ChannelConfig, env: NodeJS.ProcessEnv, warnings: string[]): { pool: PoolEntry[] } | { problem: string; missing?: string } {
  const { entries, missing, problems } = choosePool(channel.credentials!, env);
  channel.missingKeys = missing;
  for (const problem of problems) warnings.push(`${displayPath(channel.file)}: channel "${channel.id}" key pool entry ${problem}`);
  if (!entries.length) return missing.length ? { problem: `none of its pool's credentials has its variables set (set ${missing.join('; or ')})`, missing: missing.join('; or ') } : { problem: 'none of its pool\'s credentials can serve' };
  if (missing.length) warnings.push(`${displayPath(channel.file)}: channel "${channel.id}" serves with ${entries.length} of ${channel.credentials!.length} keys; not set: ${missing.join('; ')}`);
  return { pool: entries };
}

/** One line for every channel disabled by a missing variable (a first start has a score of them; one warning each buries the rest). */
function missingCredentialsLine(missing: { channel: string; variable: string }[]): string | undefined {
  if (!missing.length) return undefined;
  const list = missing.map(({ channel, variable }) => `${channel} (${variable})`).join(', ');
  return `${missing.length} channel${missing.length === 1 ? '' : 's'} disabled (missing variables): ${list}`;
}

/** Client model id to the enabled entries that serve it, lowest priority first (ids in the order the files first name them). */
function routeModels(channels: ChannelConfig[], protocols: Map<string, ProtocolConfig>): Map<string, ModelRoute[]> {
  const models = new Map<string, ModelRoute[]>();
  for (const channel of channels) {
    const protocol = protocols.get(channel.protocol);
    for (const model of channel.models) {
      const routes = models.get(model.id) ?? [];
      if (protocol && model.enabled) routes.push({ model, channel, protocol });
      models.set(model.id, routes);
    }
  }
  for (const [id, routes] of models) {
    if (routes.length) routes.sort((a, b) => a.channel.priority - b.channel.priority);
    else models.delete(id);
  }
  return models;
}

/** Each routed model's aliases to its id (the cross-check has made them unique and distinct from every id). */
function routeAliases(channels: ChannelConfig[], models: Map<string, ModelRoute[]>): Map<string, string> {
  const aliases = new Map<string, string>();
  for (const channel of channels) {
    for (const model of channel.models) if (models.has(model.id)) for (const alias of model.aliases ?? []) aliases.set(alias, model.id);
  }
  return aliases;
}

/** Family routes every protocol declares: path to the kind of its tasks (one entry per path). */
function familyRoutes(protocols: Iterable<ProtocolConfig>): Map<string, TaskSpec['kind']> {
  const routes = new Map<string, TaskSpec['kind']>();
  for (const protocol of protocols) {
    for (const spec of Object.values(protocol.tasks ?? {})) if (spec.route) routes.set(spec.route, spec.kind);
  }
  return routes;
}

/** A task family entry served at the routes protocols declare (`pipeline.task.routes: declared`), not at its own path. */
const servedAtDeclaredRoutes = (entry: EndpointConfig) => entry.pipeline?.flow === 'task' && entry.pipeline.task?.routes === 'declared';

/**
 * The catalogue, plus one endpoint per model-family task route a protocol declares (tasks.<name>.route): the entry of the
 * task's kind that says `routes: declared`, at that path (a route no such entry serves is left out; check-config says so).
 */
function endpointsOf(catalogue: EndpointConfig[], protocols: Map<string, ProtocolConfig>): EndpointConfig[] {
  const endpoints = catalogue.filter((entry) => !servedAtDeclaredRoutes(entry));
  const templates = new Map(catalogue.filter(servedAtDeclaredRoutes).map((entry) => [entry.modelKind, entry]));
  for (const [path, kind] of familyRoutes(protocols.values())) {
    const template = templates.get(kind);
    if (!template || endpoints.some((e) => e.path === path && e.method.includes('POST'))) continue;
    endpoints.push({ ...template, name: `tasks${path.replace(/\//g, '-')}`, method: ['POST'], path });
  }
  return endpoints;
}

export function routeConfig(checked: CheckedFiles, env: NodeJS.ProcessEnv, warnings: string[]): Routes {
  const channels = checked.channels.map(({ channel }) => channel);
  const missing: { channel: string; variable: string }[] = [];
  for (const channel of channels) {
    const variable = resolveCredentials(channel, env, warnings);
    if (variable) missing.push({ channel: channel.id, variable });
  }
  const line = missingCredentialsLine(missing);
  if (line) warnings.push(line);
  const models = routeModels(channels, checked.protocols);
  return { channels, models, aliases: routeAliases(channels, models), endpoints: endpointsOf(checked.endpoints, checked.protocols) };
}
