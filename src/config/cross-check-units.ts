// Prices against usage mappings, across files: every unit a model prices is read by the usage mapping of each operation
// serving it (or measured by the gateway), and can be reserved; every unit a mapping reads is priced or declared free.
// A model whose charge could be zero by mistake (a unit nobody reads, a unit read but never priced) is refused here.
import { builtInUnits, declaredLimit, tokenKeys, unitsOfPrice } from './price-units.js';
import type { Problems } from './problems.js';
import type { ChannelConfig, EndpointConfig, ModelConfig, PriceConfig, PriceCount, ProtocolConfig } from './types.js';
import { escapePointer as escape } from './cross-check-tasks.js';
import { displayPath, type YamlSource } from './yaml-source.js';

/** Where a unit is priced in a model's price, as a JSON pointer below it. */
const pricePointer = (name: string, price: PriceConfig) => (price.units?.[name] ? `units/${escape(name)}` : (builtInUnits[name] ?? `units/${escape(name)}`));

/** The units an operation's usage mapping reports (its keys other than token counts; a trailing `?` marks an optional key). */
function unitsRead(protocol: ProtocolConfig, operation: string): string[] {
  const tokens = protocol.operations[operation]?.usage?.tokens;
  if (!tokens || typeof tokens !== 'object' || Array.isArray(tokens)) return [];
  return Object.keys(tokens)
    .map((key) => key.replace(/\?$/, ''))
    .filter((key) => !tokenKeys.has(key));
}

/** The units the gateway measures itself for an entry: audio seconds (`durationOf`), characters (`charactersOf`). */
function unitsMeasured(entry: EndpointConfig): string[] {
  return [...(entry.pipeline?.durationOf ? ['seconds'] : []), ...(entry.pipeline?.charactersOf ? ['characters'] : [])];
}

/** The files the check reads: channels with their sources, protocols by id, the catalogue's entries. */
export interface PricedFiles {
  channels: readonly { channel: ChannelConfig; source: YamlSource }[];
  protocols: ReadonlyMap<string, ProtocolConfig>;
  endpoints: readonly EndpointConfig[];
}

interface Serving {
  entry: EndpointConfig;
  operation: string;
  protocol: ProtocolConfig;
}

/** The catalogue entries that send `model` of `channel` to an operation its protocol declares. */
function servingsOf(model: ModelConfig, channel: ChannelConfig, protocol: ProtocolConfig, endpoints: readonly EndpointConfig[]): Serving[] {
  return endpoints.flatMap((entry) => {
    const operation = entry.pipeline?.operation;
    if (entry.modelKind !== model.kind || !operation || !Object.hasOwn(protocol.operations, operation)) return [];
    if (channel.operations && !channel.operations.includes(operation)) return [];
    return [{ entry, operation, protocol }];
  });
}

/** Problems for a count that cannot be reserved on this model (a limit it does not declare). */
function checkCount(count: PriceCount | undefined, model: ModelConfig, pointer: string, report: (pointer: string, message: string) => void): void {
  if (count === undefined || typeof count === 'number' || !('limit' in count)) return;
  if (declaredLimit(model, count.limit) === undefined) report(pointer, `model "${model.id}" declares no "${count.limit}" (media or limits) to reserve by: declare it, or reserve a constant`);
}

/** Problems in one model's price itself: a built-in unit priced twice, a limit it does not declare. */
function checkUnitPrices(model: ModelConfig, report: (pointer: string, message: string) => void): void {
  for (const [name, unit] of Object.entries(model.price.units ?? {})) {
    const rates = (['each', 'perThousand', 'perMillion', 'free'] as const).filter((rate) => unit[rate] !== undefined);
    if (rates.length !== 1) report(`/units/${escape(name)}`, `unit "${name}" of model "${model.id}" needs exactly one of each, perThousand, perMillion or free${rates.length ? ` (it has ${rates.join(', ')})` : ''}`);
    if (unit.free && (unit.reserve !== undefined || unit.most !== undefined)) report(`/units/${escape(name)}`, `unit "${name}" is free: it reserves nothing (drop reserve and most)`);
    const field = builtInUnits[name];
    if (field && !unit.free) report(`/units/${escape(name)}`, `"${name}" is priced by ${field}; under units it may only be declared free`);
    else if (field && model.price[field as keyof PriceConfig] !== undefined) report(`/units/${escape(name)}`, `"${name}" is priced by ${field} and declared free: choose one`);
    checkCount(unit.reserve, model, `/units/${escape(name)}/reserve`, report);
    checkCount(unit.most, model, `/units/${escape(name)}/most`, report);
  }
}

/**
 * Checks every model's units against the operations serving it: priced units read (or measured) and reservable, units
 * read priced or declared free. `protocolSources` locates a usage mapping for messages (`file:line:col`).
 */
export function checkUnits(checked: PricedFiles, protocolSources: ReadonlyMap<string, YamlSource>, problems: Problems): void {
  for (const { channel, source } of checked.channels) {
    const protocol = checked.protocols.get(channel.protocol);
    channel.models.forEach((model, index) => {
      const at = `/models/${index}/price`;
      const report = (pointer: string, message: string) => problems.add(source, `${at}${pointer}`, message);
      checkUnitPrices(model, report);
      if (!protocol || model.price.free) return;
      const priced = unitsOfPrice(model.price);
      // Each unit is reported once per model, naming every operation where it goes wrong.
      const unread = new Map<string, string[]>();
      const unpriced = new Map<string, string[]>();
      const note = (map: Map<string, string[]>, name: string, where: () => string) => map.set(name, [...(map.get(name) ?? []), where()]);
      for (const { entry, operation } of servingsOf(model, channel, protocol, checked.endpoints)) {
        const read = unitsRead(protocol, operation);
        const known = new Set([...read, ...unitsMeasured(entry)]);
        // Located only for a message: locating parses the protocol's file again, with positions.
        const where = () => {
          const mapping = protocolSources.get(protocol.id)?.locate(`/operations/${escape(operation)}/usage`) ?? displayPath(protocol.file);
          return `operation "${operation}" of protocol "${protocol.id}" (${mapping}) for endpoint "${entry.name}"`;
        };
        for (const unit of priced) {
          if (!unit.priced) continue;
          if (!known.has(unit.name)) note(unread, unit.name, where);
          else if (unit.name === 'searches' && !entry.pipeline?.searches) report('/perThousandSearches', `model "${model.id}" is priced by search units, which endpoint "${entry.name}" cannot estimate: declare its pipeline.searches`);
        }
        for (const name of read) if (!priced.some((u) => u.name === name)) note(unpriced, name, where);
      }
      for (const [name, wheres] of unread) {
        report(`/${pricePointer(name, model.price)}`, `model "${model.id}" is priced by "${name}", which ${wheres.join(' and ')} neither reads in its usage mapping nor measures: it would never be charged`);
      }
      for (const [name, wheres] of unpriced) {
        report('', `${wheres.join(' and ')} read unit "${name}" in the usage mapping, which model "${model.id}" does not price (it would cost 0): price it (price.units.${name}) or declare it free (price.units.${name}: { free: true })`);
      }
    });
  }
}
