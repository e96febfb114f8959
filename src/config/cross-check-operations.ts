// Where the catalogue meets the protocols: a relayed entry's `pipeline.operation` is declared by every protocol that serves
// its model kind, and a translated entry's (chat, images) by some protocol in the entry's own dialect (its pass-through),
// so a misspelt operation is a config error at load, never a call that fails as the client's fault.
import type { Problems } from './problems.js';
import { nearestName } from './schemas.js';
import type { ChannelConfig, EndpointConfig, ProtocolConfig } from './types.js';
import type { ValidatedFile } from './validate.js';
import { displayPath, type YamlSource } from './yaml-source.js';

interface Served {
  channel: ChannelConfig;
  source: YamlSource;
  /** Index of the first model of the kind in the channel's file. */
  index: number;
  protocol: ProtocolConfig;
}

/** Every channel (enabled or not: a key set later enables it) with a model of `kind`, with its protocol. */
function channelsServing(kind: string, channels: { channel: ChannelConfig; source: YamlSource }[], protocols: Map<string, ProtocolConfig>): Served[] {
  const served: Served[] = [];
  for (const { channel, source } of channels) {
    const index = channel.models.findIndex((model) => model.kind === kind);
    const protocol = protocols.get(channel.protocol);
    if (index >= 0 && protocol) served.push({ channel, source, index, protocol });
  }
  return served;
}

/**
 * Each `relay` entry's operation against the protocols serving its kind (the relay sends exactly that operation; the
 * translated dialects choose theirs by protocol pair). No protocol declaring it: the entry is wrong, reported there.
 * Some do and some not: each channel whose protocol lacks it (or whose `operations` leave it out) is reported.
 */
export function checkPipelineOperations(catalogue: ValidatedFile<EndpointConfig[]>[], channels: { channel: ChannelConfig; source: YamlSource }[], protocols: Map<string, ProtocolConfig>, problems: Problems): void {
  for (const { source, value } of catalogue) {
    value?.forEach((entry, index) => {
      const operation = entry.pipeline?.operation;
      if (operation && entry.pipeline?.dialect && entry.pipeline.flow !== 'relay' && entry.pipeline.flow !== 'task') {
        return checkPassthroughOperation(entry, index, operation, entry.pipeline.dialect, source, protocols, problems);
      }
      if (entry.pipeline?.flow !== 'relay' || !operation || !entry.modelKind) return;
      const served = channelsServing(entry.modelKind, channels, protocols);
      const lacking = served.filter(({ protocol }) => !Object.hasOwn(protocol.operations, operation));
      if (served.length && lacking.length === served.length) {
        const ids = [...new Set(lacking.map(({ protocol }) => protocol.id))];
        const declared = [...new Set(lacking.flatMap(({ protocol }) => Object.keys(protocol.operations)))].join(', ');
        problems.add(source, `/${index}/pipeline/operation`, `endpoint "${entry.name}" sends operation "${operation}", which no protocol serving kind "${entry.modelKind}" declares (${ids.length === 1 ? 'protocol' : 'protocols'} ${ids.map((id) => `"${id}"`).join(', ')} ${ids.length === 1 ? 'declares' : 'declare'}: ${declared})`);
        return;
      }
      for (const { channel, source: channelSource, index: model, protocol } of served) {
        const where = `endpoint "${entry.name}" (${displayPath(source.file)}) sends operation "${operation}"`;
        if (!Object.hasOwn(protocol.operations, operation)) {
          problems.add(channelSource, `/models/${model}/kind`, `model "${channel.models[model].id}" is of kind "${entry.modelKind}": ${where}, which its protocol "${protocol.id}" does not declare (it has: ${Object.keys(protocol.operations).join(', ')})`);
        } else if (channel.operations && !channel.operations.includes(operation)) {
          problems.add(channelSource, '/operations', `model "${channel.models[model].id}" is of kind "${entry.modelKind}": ${where}, which this channel's operations leave out`);
        }
      }
    });
  }
}

/**
 * A translated entry's operation is the one a protocol of the client's own dialect is sent unchanged (the pass-through);
 * the other protocols get the operation their translation declares. Protocols of that dialect but none declaring it:
 * every pass-through call would fail as untranslatable, so the entry is wrong, reported with the nearest declared name.
 * (With no protocol of the dialect loaded, every call is translated and the name is never sent.)
 */
function checkPassthroughOperation(entry: EndpointConfig, index: number, operation: string, dialect: string, source: YamlSource, protocols: Map<string, ProtocolConfig>, problems: Problems): void {
  const declared = new Set<string>();
  for (const protocol of protocols.values()) {
    for (const [name, op] of Object.entries(protocol.operations)) if ((op.dialect ?? protocol.dialect) === dialect) declared.add(name);
  }
  if (!declared.size || declared.has(operation)) return;
  const near = nearestName(operation, [...declared]);
  problems.add(source, `/${index}/pipeline/operation`, `endpoint "${entry.name}" sends operation "${operation}", which no protocol of its dialect "${dialect}" declares (they declare: ${[...declared].join(', ')})${near ? `; did you mean "${near}"?` : ''}`);
}

/** The endpoint families a cache may name: every `pipeline.operation` of the catalogue. */
export const catalogueOperations = (endpoints: readonly EndpointConfig[]): Set<string> => new Set(endpoints.flatMap((e) => (e.pipeline?.operation ? [e.pipeline.operation] : [])));

/** A `cache.families` list (a route's or a model's) against the catalogue's operations: each unknown one at its place, with the nearest name. */
export function checkCacheFamilies(families: readonly string[] | undefined, operations: ReadonlySet<string>, source: YamlSource, pointer: string, problems: Problems): void {
  families?.forEach((family, index) => {
    if (operations.has(family)) return;
    const near = nearestName(family, [...operations]);
    problems.add(source, `${pointer}/${index}`, `no catalogue entry sends "${family}" (the families are the catalogue's pipeline.operation names: ${[...operations].join(', ')})${near ? `; did you mean "${near}"?` : ''}`);
  });
}

/** Each model's own `cache.families` (as a route's, src/config/routes.ts). */
export function checkModelCacheFamilies(channels: { channel: ChannelConfig; source: YamlSource }[], endpoints: readonly EndpointConfig[], problems: Problems): void {
  const operations = catalogueOperations(endpoints);
  for (const { channel, source } of channels) channel.models.forEach((model, index) => checkCacheFamilies(model.cache?.families, operations, source, `/models/${index}/cache/families`, problems));
}
