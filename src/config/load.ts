// The one config loader: find, parse with positions, interpolate, validate, cross-check and freeze. check-config runs exactly this.
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { clientValue, ConfigError } from '../errors.js';
import { isTimeZone } from '../billing/periods.js';
import { createLiquid, loadFilters, TemplateSet } from '../engine/liquid.js';
import { runMappingFixtures } from '../engine/mapping/fixtures.js';
import { interpolateValue } from './env.js';
import { createSchemaRegistry, describeAjvError, type SchemaRegistry } from './schemas.js';
import type { ChannelConfig, EndpointConfig, GatewayConfig, LoadedConfig, ModelRoute, ProtocolConfig } from './types.js';
import { displayPath, readYamlSource, type YamlSource } from './yaml-source.js';
import { familyRoutes } from '../tasks/spec.js';

export { dataPathFor, resolveConfigPath } from './locate.js';

const catalogueDir = join(import.meta.dirname, '..', 'endpoints', 'catalogue');
/** Headers a protocol may not forward from the client: credentials, and what the gateway sets for each request. */
const unforwardable = new Set(['authorization', 'x-api-key', 'proxy-authorization', 'cookie', 'host', 'content-type', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect']);

const priceFields = ['inputPerMillion', 'outputPerMillion', 'cachedInputPerMillion', 'perRequest', 'perImage', 'perVideoSecond'];
/** Model fields that say what a chat model accepts (schemas/model.schema.json); translations read them. */
const chatCapabilities = ['reasoning', 'outputBound', 'thinking', 'prefill'];

function yamlFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((f) => join(dir, f));
}

class Problems {
  readonly list: string[] = [];
  add(source: YamlSource, pointer: string, message: string, key?: string) {
    this.list.push(`${source.locate(key !== undefined ? pointer.slice(0, pointer.length - key.length - 1) : pointer, key)} ${pointer || '/'} ${message}`);
  }
}

/** Parses and validates one YAML file against a schema; returns its value when valid. */
function readValidated<T>(file: string, schemaId: string, registry: SchemaRegistry, problems: Problems, env: NodeJS.ProcessEnv): { value: T; source: YamlSource } | undefined {
  const source = readYamlSource(file);
  if (source.syntaxErrors.length) {
    problems.list.push(...source.syntaxErrors);
    return undefined;
  }
  let value = interpolateValue(source.value ?? {}, env) as Record<string, unknown>;
  if (schemaId === 'config') {
    value = { ...value };
    for (const section of registry.configSections) value[section.slice('config/'.length)] ??= {};
  }
  const validate = registry.validator(schemaId);
  if (!validate(value)) {
    for (const error of validate.errors ?? []) {
      const { pointer, key, message } = describeAjvError(error);
      problems.add(source, pointer, message, key);
    }
    return undefined;
  }
  return { value: value as T, source };
}

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
}

export async function loadConfig(file: string, options: LoadOptions = {}): Promise<LoadedConfig> {
  const env = options.env ?? process.env;
  const problems = new Problems();
  const warnings: string[] = [];
  const templates = new TemplateSet(createLiquid());
  await loadFilters(templates.liquid);
  templates.verify = env.MAPPING_VERIFY === '1';
  const registry = createSchemaRegistry(templates);

  if (!existsSync(file)) throw new ConfigError([`${displayPath(file)}:1:1 / config file not found`]);
  const root = readValidated<GatewayConfig>(file, 'config', registry, problems, env);
  const baseDir = dirname(file);
  const gateway = root?.value;
  const database = gateway?.storage.database;
  if (root && database?.driver === 'postgres' && !database.url && !env.DATABASE_URL) {
    problems.add(root.source, '/storage/database/driver', 'database driver "postgres" needs a connection URL: set storage.database.url or DATABASE_URL');
  }
  const timeZone = (gateway?.billing as { timeZone?: string } | undefined)?.timeZone;
  if (root && timeZone !== undefined && !isTimeZone(timeZone)) {
    problems.add(root.source, '/billing/timeZone', `unknown time zone ${clientValue(timeZone)}: use an IANA name such as "UTC" or "Europe/Berlin"`);
  }

  const channelsDir = resolve(baseDir, gateway?.channels.dir ?? './channels');
  const protocolsDir = resolve(baseDir, gateway?.channels.protocolsDir ?? join(channelsDir, 'protocols'));

  const protocols = new Map<string, ProtocolConfig>();
  const protocolSources = new Map<string, YamlSource>();
  for (const path of yamlFiles(protocolsDir)) {
    const read = readValidated<ProtocolConfig>(path, 'protocol', registry, problems, env);
    problems.list.push(...templates.compilePending(path));
    if (!read) continue;
    if (protocols.has(read.value.id)) {
      problems.add(read.source, '/id', `protocol "${read.value.id}" is already defined in ${displayPath(protocols.get(read.value.id)!.file)}`);
      continue;
    }
    // A forwarded header must never carry the client's own credential, or a header the gateway itself sets.
    read.value.forwardHeaders?.forEach((name, index) => {
      if (unforwardable.has(name) || name === read.value.auth?.header.toLowerCase()) {
        problems.add(read.source, `/forwardHeaders/${index}`, `header "${name}" cannot be forwarded: it carries credentials or is set by the gateway`);
      }
    });
    protocols.set(read.value.id, { ...read.value, file: path });
    protocolSources.set(read.value.id, read.source);
  }

  // Every mapping renders its fixtures (channels/protocols/tests/) before the config is accepted.
  problems.list.push(...runMappingFixtures({ templates }, protocols, join(protocolsDir, 'tests')));
  warnings.push(...templates.unrendered());

  const channels: ChannelConfig[] = [];
  /** Caps and spent totals are kept in one currency, so every price must use it. */
  let billingCurrency: { currency: string; where: string } | undefined;
  const modelOwners = new Map<string, { channel: ChannelConfig; index: number; source: YamlSource }[]>();
  const channelIds = new Map<string, string>();
  for (const path of yamlFiles(channelsDir)) {
    const read = readValidated<Omit<ChannelConfig, 'file'>>(path, 'channel', registry, problems, env);
    if (!read) continue;
    const channel: ChannelConfig = { ...read.value, file: path };
    const { source } = read;
    if (channelIds.has(channel.id)) {
      problems.add(source, '/id', `channel "${channel.id}" is already defined in ${channelIds.get(channel.id)}`);
      continue;
    }
    channelIds.set(channel.id, displayPath(path));
    if (!protocols.has(channel.protocol)) {
      const known = [...protocols.keys()].join(', ') || 'none';
      problems.add(source, '/protocol', `unknown protocol "${channel.protocol}" (known: ${known}; searched ${displayPath(protocolsDir)})`);
    }
    const declared = protocols.get(channel.protocol)?.operations;
    channel.operations?.forEach((name, index) => {
      if (declared && !declared[name]) problems.add(source, `/operations/${index}`, `protocol "${channel.protocol}" has no operation "${name}" (it has: ${Object.keys(declared).join(', ')})`);
    });
    channel.models.forEach((model, index) => {
      if (!priceFields.some((f) => (model.price as unknown as Record<string, unknown>)[f] !== undefined)) {
        problems.add(source, `/models/${index}/price`, `model "${model.id}" has no price: set at least one of ${priceFields.join(', ')}`);
      }
      billingCurrency ??= { currency: model.price.currency, where: `${displayPath(path)} model "${model.id}"` };
      if (model.price.currency !== billingCurrency.currency) {
        problems.add(source, `/models/${index}/price/currency`, `model "${model.id}" is priced in ${model.price.currency}, but ${billingCurrency.where} is priced in ${billingCurrency.currency}; spending caps and totals use one currency`);
      }
      for (const capability of chatCapabilities) {
        const declared = (model as unknown as Record<string, unknown>)[capability];
        if (model.kind !== 'chat' && declared !== undefined && declared !== false) {
          problems.add(source, `/models/${index}/${capability}`, `model "${model.id}" is of kind ${model.kind}: "${capability}" says what a chat model accepts`);
        }
      }
      if (model.limits && model.limits.maxOutputTokens > model.limits.contextTokens) {
        problems.add(source, `/models/${index}/limits/maxOutputTokens`, `model "${model.id}" declares maxOutputTokens ${model.limits.maxOutputTokens}, more than its contextTokens ${model.limits.contextTokens}`);
      }
      const owners = modelOwners.get(model.id) ?? [];
      owners.push({ channel, index, source });
      modelOwners.set(model.id, owners);
    });
    if (channel.credential) {
      const value = env[channel.credential.env];
      const secret = channel.credential.secretEnv ? env[channel.credential.secretEnv] : undefined;
      if (value && (secret || !channel.credential.secretEnv)) {
        channel.credentialValue = value;
        channel.secretValue = secret;
      } else if (value) {
        channel.disabledReason = `channel "${channel.id}" is disabled: environment variable ${channel.credential.secretEnv} is not set`;
        warnings.push(`${displayPath(path)}: ${channel.disabledReason}`);
      } else {
        channel.disabledReason = `channel "${channel.id}" is disabled: environment variable ${channel.credential.env} is not set`;
        warnings.push(`${displayPath(path)}: ${channel.disabledReason}`);
      }
    }
    if (!channel.enabled) channel.disabledReason ??= `channel "${channel.id}" is disabled in ${displayPath(path)}`;
    channels.push(channel);
  }

  const models = new Map<string, ModelRoute[]>();
  for (const [id, owners] of modelOwners) {
    if (owners.length > 1) {
      for (const owner of owners.filter((o) => !o.channel.models[o.index].fallback)) {
        const others = owners.filter((o) => o !== owner).map((o) => `channel "${o.channel.id}"`).join(', ');
        problems.add(owner.source, `/models/${owner.index}/id`, `model "${id}" is also served by ${others}; declare "fallback: true" on every entry to make them a fallback group`);
      }
    }
    const routes = owners
      .filter((o) => protocols.has(o.channel.protocol) && o.channel.models[o.index].enabled)
      .sort((a, b) => a.channel.priority - b.channel.priority)
      .map((o) => ({ model: o.channel.models[o.index], channel: o.channel, protocol: protocols.get(o.channel.protocol)! }));
    if (routes.length) models.set(id, routes);
  }

  const endpoints: EndpointConfig[] = [];
  for (const path of yamlFiles(catalogueDir)) {
    const read = readValidated<EndpointConfig[]>(path, 'catalogue', registry, problems, env);
    if (read) endpoints.push(...read.value);
  }
  // Model-family task routes protocols declare (tasks.<name>.route), one endpoint per path.
  for (const [path, kind] of familyRoutes(protocols.values())) {
    if (endpoints.some((e) => e.path === path && e.method.includes('POST'))) continue;
    endpoints.push({ name: `tasks${path.replace(/\//g, '-')}`, method: ['POST'], path, aliases: true, scope: kind === 'video' ? 'videos.generate' : 'images.generate', auth: 'key', dialect: 'openai', bodyLimit: 1048576, multipart: true, handler: 'tasks-family', options: { kind } });
  }

  if (problems.list.length || !gateway) throw new ConfigError(problems.list);
  return deepFreeze({ file, baseDir, gateway, channels, protocols, models, endpoints, templates, schemas: registry, warnings }, new Set<unknown>([templates, registry]));
}

function deepFreeze<T>(value: T, skip: Set<unknown>): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value) || skip.has(value)) return value;
  if (value instanceof Map) {
    for (const v of value.values()) deepFreeze(v, skip);
    return value;
  }
  for (const v of Object.values(value)) deepFreeze(v, skip);
  return Object.freeze(value);
}

/** One line per channel kind count, for check-config and the startup log. */
export function summarize(config: LoadedConfig): string {
  const enabled = config.channels.filter((c) => !c.disabledReason).length;
  const kinds = new Map<string, number>();
  for (const routes of config.models.values()) kinds.set(routes[0].model.kind, (kinds.get(routes[0].model.kind) ?? 0) + 1);
  const perKind = [...kinds].map(([k, n]) => `${k} ${n}`).join(', ') || 'none';
  return `${config.channels.length} channel(s) (${enabled} enabled), ${config.protocols.size} protocol(s), ${config.models.size} model(s): ${perKind}; ${config.endpoints.length} endpoint(s), ${config.templates.size} template(s)`;
}
