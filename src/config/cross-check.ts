// The cross-check stage: what no single file's schema can say. Within a protocol, every operation its tasks, translations
// and evaluate section name is declared, each task can end (its statusMap reaches completed and failed) and says where its
// result is. Across files: ids unique, every channel's protocol and operations exist, every model priced, in one currency,
// and a model served twice only as a declared fallback group.
import { sep } from 'node:path';
import { isTimeZone } from './periods.js';
import { clientValue } from '../base/errors.js';
import { credentialsOf, foreignCredentialFields } from './credentials.js';
import { batchOperations, checkBatchApi } from './cross-check-batches.js';
import { checkModelCacheFamilies, checkPipelineOperations } from './cross-check-operations.js';
import { checkUnits } from './cross-check-units.js';
import type { Problems } from './problems.js';
import { checkOperation, checkTask, checkTaskKinds, escapePointer as escape, taskOperations, type Report } from './cross-check-tasks.js';
import type { ChannelConfig, EndpointConfig, GatewayConfig, ProtocolConfig, ProtocolSchema } from './types.js';
import type { ValidatedConfig } from './validate.js';
import { displayPath, type YamlSource } from './yaml-source.js';

const priceFields = ['inputPerMillion', 'outputPerMillion', 'cachedInputPerMillion', 'perRequest', 'perImage', 'perVideoSecond', 'perMinute', 'perMillionCharacters', 'perThousandSearches', 'units', 'free'] as const;
/** Model fields that say what a chat model accepts (schemas/model.schema.json); translations read them. */
const chatCapabilities = ['reasoning', 'outputBound', 'thinking', 'prefill', 'structuredOutputs'] as const;
/** Headers a protocol may not forward from the client: credentials, and what the gateway sets for each request. */
const unforwardable = new Set(['authorization', 'x-api-key', 'proxy-authorization', 'cookie', 'host', 'content-type', 'content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'te', 'trailer', 'expect']);

/** Operations some section calls by name; any other operation is reached only by a client of its dialect. */
function namedOperations(protocol: ProtocolSchema): Set<string> {
  const named = new Set<string>(Object.values(protocol.translations ?? {}).map((t) => t.operation));
  // A stream operation is called in its operation's place.
  for (const name of [...named]) {
    const streamOperation = protocol.operations[name]?.streamOperation;
    if (streamOperation) named.add(streamOperation);
  }
  if (protocol.evaluate) named.add(protocol.evaluate.operation);
  for (const task of Object.values(protocol.tasks ?? {})) for (const name of taskOperations(task)) named.add(name);
  if (protocol.batches) for (const { name } of batchOperations(protocol.batches)) named.add(name);
  return named;
}

/** Client dialects whose requests may ask for a stream: a translation from one needs `stream` mappings. */
const streamingDialects = new Set(['openai-chat', 'anthropic-messages', 'openai-responses']);

/** Reports every cross-reference of `protocol` that does not hold. */
export function crossCheckProtocol(protocol: ProtocolSchema, report: Report): void {
  // A forwarded header must never carry the client's own credential, or a header the gateway itself sets.
  protocol.forwardHeaders?.forEach((name, index) => {
    if (unforwardable.has(name) || name === protocol.auth?.header.toLowerCase()) {
      report(`/forwardHeaders/${index}`, `header "${name}" cannot be forwarded: it carries credentials or is set by the gateway`);
    }
  });
  for (const [name, operation] of Object.entries(protocol.operations)) {
    if (operation.streamOperation) checkOperation(protocol, `/operations/${escape(name)}/streamOperation`, operation.streamOperation, report, `operation "${name}"`);
  }
  for (const [client, translation] of Object.entries(protocol.translations ?? {})) {
    checkOperation(protocol, `/translations/${escape(client)}/operation`, translation.operation, report, `translation "${client}"`);
    if (streamingDialects.has(client) && !translation.stream) report(`/translations/${escape(client)}`, `translation "${client}" has no stream section: ${client} clients may ask for a stream`);
  }
  if (protocol.evaluate) checkOperation(protocol, '/evaluate/operation', protocol.evaluate.operation, report, 'the evaluate section');
  for (const [name, task] of Object.entries(protocol.tasks ?? {})) checkTask(protocol, name, task, report);
  if (protocol.batches) checkBatchApi(protocol, protocol.batches, report);
  if (protocol.dialect) return;
  const named = namedOperations(protocol);
  for (const [name, operation] of Object.entries(protocol.operations)) {
    if (operation.dialect || named.has(name)) continue;
    report(`/operations/${escape(name)}`, `operation "${name}" speaks no dialect and no task, translation or evaluate section names it, so nothing can call it: set the protocol's dialect (or the operation's)`, name);
  }
}

/** The config's files, each checked against the others. */
export interface CheckedFiles {
  /** Absent when the config file itself is invalid (its problems are reported). */
  gateway?: GatewayConfig;
  protocols: Map<string, ProtocolConfig>;
  /** Ids of protocol files that did not validate: their own errors are reported, not "unknown protocol" wherever they are named. */
  rejected: Set<string>;
  channels: { channel: ChannelConfig; source: YamlSource }[];
  endpoints: EndpointConfig[];
}

function checkRoot(valid: ValidatedConfig, problems: Problems, env: NodeJS.ProcessEnv): void {
  const database = valid.root.value?.storage.database;
  if (database?.driver === 'postgres' && !database.url && !env.DATABASE_URL) {
    problems.add(valid.root.source, '/storage/database/driver', 'database driver "postgres" needs a connection URL: set storage.database.url or DATABASE_URL');
  }
  const timeZone = valid.root.value?.billing.timeZone;
  if (timeZone !== undefined && !isTimeZone(timeZone)) {
    problems.add(valid.root.source, '/billing/timeZone', `unknown time zone ${clientValue(timeZone)}: use an IANA name such as "UTC" or "Europe/Berlin"`);
  }
}

function checkProtocols(valid: ValidatedConfig, problems: Problems): Pick<CheckedFiles, 'protocols' | 'rejected'> {
  const protocols = new Map<string, ProtocolConfig>();
  const sources = new Map<string, YamlSource>();
  const rejected = new Set<string>();
  for (const { value, source } of valid.protocols) {
    if (!value) {
      const id = (source.value as { id?: unknown } | undefined)?.id;
      if (typeof id === 'string') rejected.add(id);
      continue;
    }
    const known = protocols.get(value.id);
    if (known) {
      problems.add(source, '/id', `protocol "${value.id}" is already defined in ${displayPath(known.file)}`);
      continue;
    }
    protocols.set(value.id, { ...value, file: source.file });
    sources.set(value.id, source);
  }
  for (const [id, protocol] of protocols) {
    const source = sources.get(id)!;
    const report = (pointer: string, message: string, key?: string) => problems.add(source, pointer, message, key);
    const merged = protocol.extends ? withBase(protocol, protocols, rejected, report) : protocol;
    if (!merged) continue;
    crossCheckProtocol(merged, report);
    protocols.set(id, merged);
  }
  return { protocols, rejected };
}

/**
 * A protocol that `extends` another, with what it does not declare taken from that one (schemas/protocol.schema.json):
 * each operation it names over the base's of that name, field by field. Undefined (reported) when the base is unknown,
 * itself a variant, or the protocol itself.
 */
function withBase(protocol: ProtocolConfig, protocols: Map<string, ProtocolConfig>, rejected: Set<string>, report: Report): ProtocolConfig | undefined {
  const base = protocols.get(protocol.extends!);
  if (!base || base.extends || base === protocol) {
    if (!rejected.has(protocol.extends!)) report('/extends', base ? `protocol "${protocol.extends}" is itself a variant (extends "${base.extends ?? base.id}"): extend the protocol it extends` : `unknown protocol "${protocol.extends}" (known: ${[...protocols.keys()].join(', ')})`);
    return undefined;
  }
  const operations = { ...base.operations };
  for (const [name, operation] of Object.entries(protocol.operations)) operations[name] = { ...base.operations[name], ...operation };
  // A vendor's batch API is its own: a variant (Claude on Vertex AI) declares its own or has none.
  const { id: _id, description: _description, file: _file, batches: _batches, ...inherited } = base;
  return { ...inherited, ...protocol, operations, translations: { ...base.translations, ...protocol.translations } };
}

function checkChannel(channel: ChannelConfig, source: YamlSource, known: Pick<CheckedFiles, 'protocols' | 'rejected'> & { chatKinds: ReadonlySet<string> }, protocolsDir: string, problems: Problems): void {
  const protocol = known.protocols.get(channel.protocol);
  if (!protocol && !known.rejected.has(channel.protocol)) {
    const names = [...known.protocols.keys()].join(', ') || 'none';
    problems.add(source, '/protocol', `unknown protocol "${channel.protocol}" (known: ${names}; searched ${displayPath(protocolsDir)})`);
  }
  channel.operations?.forEach((name, index) => {
    if (protocol && !Object.hasOwn(protocol.operations, name)) {
      problems.add(source, `/operations/${index}`, `protocol "${channel.protocol}" has no operation "${name}" (it has: ${Object.keys(protocol.operations).join(', ')})`);
    }
  });
  checkCredentials(channel, source, protocol, problems);
  channel.models.forEach((model, index) => {
    if (!priceFields.some((f) => model.price[f] !== undefined)) {
      problems.add(source, `/models/${index}/price`, `model "${model.id}" has no price: set at least one of ${priceFields.join(', ')}`);
    }
    for (const capability of chatCapabilities) {
      const declared = model[capability];
      if (!known.chatKinds.has(model.kind) && declared !== undefined && declared !== false) {
        problems.add(source, `/models/${index}/${capability}`, `model "${model.id}" is of kind ${model.kind}: "${capability}" says what a chat model accepts`);
      }
    }
    if (model.limits && model.limits.maxOutputTokens > model.limits.contextTokens) {
      problems.add(source, `/models/${index}/limits/maxOutputTokens`, `model "${model.id}" declares maxOutputTokens ${model.limits.maxOutputTokens}, more than its contextTokens ${model.limits.contextTokens}`);
    }
  });
}

/**
 * Each credential takes only its kind's fields (and a key pool's entry its weight and base URL); a static one needs a
 * header to go in, its own or its protocol's. A channel has one credential (or alternatives) or a key pool, not both.
 */
function checkCredentials(channel: ChannelConfig, source: YamlSource, protocol: ProtocolConfig | undefined, problems: Problems): void {
  if (channel.credential && channel.credentials) problems.add(source, '/credentials', 'a channel takes "credential" (one, or alternatives of which the first that is set serves) or "credentials" (a key pool, all serving), not both', 'credentials');
  const listed = [
    ...credentialsOf(channel.credential).map((credential, index) => ({ credential, pointer: Array.isArray(channel.credential) ? `/credential/${index}` : '/credential', inPool: false })),
    ...(channel.credentials ?? []).map((credential, index) => ({ credential, pointer: `/credentials/${index}`, inPool: true })),
  ];
  for (const { credential, pointer, inPool } of listed) {
    const kind = credential.kind ?? 'static';
    for (const field of foreignCredentialFields(credential, inPool)) {
      const why = field === 'weight' || field === 'baseUrl' ? `field "${field}" is for an entry of a key pool ("credentials")` : `field "${field}" is not used by a credential of kind ${kind}`;
      problems.add(source, `${pointer}/${field}`, why, field);
    }
    if (kind === 'static' && protocol && !protocol.auth && !credential.header) {
      problems.add(source, pointer, `protocol "${protocol.id}" declares no auth header: a static credential on it needs its own "header" and "value"`);
    }
    if (credential.header && !credential.value && kind === 'static' && !protocol?.auth) problems.add(source, `${pointer}/header`, 'a static credential with its own "header" needs a "value" too');
  }
}

/** Caps and spent totals are kept in one currency, so every price must use it. */
function checkCurrency(channels: CheckedFiles['channels'], problems: Problems): void {
  let first: { currency: string; where: string } | undefined;
  for (const { channel, source } of channels) {
    channel.models.forEach((model, index) => {
      first ??= { currency: model.price.currency, where: `${displayPath(channel.file)} model "${model.id}"` };
      if (model.price.currency === first.currency) return;
      problems.add(source, `/models/${index}/price/currency`, `model "${model.id}" is priced in ${model.price.currency}, but ${first.where} is priced in ${first.currency}; spending caps and totals use one currency`);
    });
  }
}

/** A model id served by several channels must be a fallback group: every entry says `fallback: true`. */
function checkModelOwners(channels: CheckedFiles['channels'], problems: Problems): void {
  const owners = new Map<string, { channel: ChannelConfig; index: number; source: YamlSource }[]>();
  for (const { channel, source } of channels) channel.models.forEach((model, index) => owners.set(model.id, [...(owners.get(model.id) ?? []), { channel, index, source }]));
  for (const [id, list] of owners) {
    if (list.length < 2) continue;
    for (const owner of list.filter((o) => !o.channel.models[o.index].fallback)) {
      const others = list.filter((o) => o !== owner).map((o) => `channel "${o.channel.id}"`).join(', ');
      problems.add(owner.source, `/models/${owner.index}/id`, `model "${id}" is also served by ${others}; declare "fallback: true" on every entry to make them a fallback group`);
    }
  }
}

/** Every model's kind is one an endpoint of the catalogue serves (`modelKind`), else no route could reach it. */
function checkModelKinds(channels: CheckedFiles['channels'], endpoints: readonly EndpointConfig[], problems: Problems): void {
  const kinds = new Set(endpoints.map((e) => e.modelKind).filter((k) => k !== undefined));
  for (const { channel, source } of channels) {
    channel.models.forEach((model, index) => {
      if (!kinds.has(model.kind)) problems.add(source, `/models/${index}/kind`, `model "${model.id}" is of kind "${model.kind}", which no endpoint serves (kinds: ${[...kinds].join(', ')})`);
    });
  }
}

/**
 * The channel files that serve: an overlay channel saying `overrides: true` takes the place of the shipped channel of its
 * id (the shipped file is left out); without it, the same id in both is reported below like any duplicate, at the overlay's file.
 */
function overlaidChannels(valid: ValidatedConfig, problems: Problems): ValidatedConfig['channels'] {
  const overlayDir = valid.sources.overlayDir;
  const inOverlay = (file: string) => !!overlayDir && file.startsWith(overlayDir + sep);
  const replaced = new Set<string>();
  for (const { value, source } of valid.channels) {
    if (!value?.overrides) continue;
    if (inOverlay(source.file)) replaced.add(value.id);
    else problems.add(source, '/overrides', `"overrides" is for a channel in the overlay folder (${overlayDir ? displayPath(overlayDir) : 'overlay.dir or GATEWAY_OVERLAY_DIR, unset'}): it takes the place of the shipped channel of its id`);
  }
  return valid.channels.filter(({ value, source }) => !value || inOverlay(source.file) || !replaced.has(value.id));
}

export function crossCheckConfig(valid: ValidatedConfig, problems: Problems, env: NodeJS.ProcessEnv): CheckedFiles {
  checkRoot(valid, problems, env);
  const known = checkProtocols(valid, problems);
  const channels: CheckedFiles['channels'] = [];
  const ids = new Map<string, string>();
  const endpoints = valid.catalogue.flatMap((file) => file.value ?? []);
  // The kinds the chat flow serves: what a chat capability (reasoning, thinking) may be declared on.
  const chatKinds = new Set(endpoints.flatMap((e) => (e.pipeline?.flow === 'chat' && e.modelKind ? [e.modelKind] : [])));
  for (const { value, source } of overlaidChannels(valid, problems)) {
    if (!value) continue;
    // The schema's if/then/else has made `credential` one credential or a list of them (a shape the generated type cannot say).
    const channel: ChannelConfig = { ...value, credential: value.credential as ChannelConfig['credential'], file: source.file };
    if (ids.has(channel.id)) {
      const hint = valid.sources.overlayDir && source.file.startsWith(valid.sources.overlayDir + sep) ? ': give this one another id, or say "overrides: true" to take the place of the shipped one' : '';
      problems.add(source, '/id', `channel "${channel.id}" is already defined in ${ids.get(channel.id)}${hint}`);
      continue;
    }
    ids.set(channel.id, displayPath(source.file));
    checkChannel(channel, source, { ...known, chatKinds }, valid.sources.protocolsDir, problems);
    channels.push({ channel, source });
  }
  checkCurrency(channels, problems);
  checkModelOwners(channels, problems);
  checkModelKinds(channels, endpoints, problems);
  checkPipelineOperations(valid.catalogue, channels, known.protocols, problems);
  checkModelCacheFamilies(channels, endpoints, problems);
  checkTaskKinds(valid.protocols, endpoints, problems);
  const protocolSources = new Map(valid.protocols.flatMap(({ value, source }) => (value ? [[value.id, source] as const] : [])));
  checkUnits({ channels, protocols: known.protocols, endpoints }, protocolSources, problems);
  return { gateway: valid.root.value, ...known, channels, endpoints };
}
