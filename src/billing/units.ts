// A price's units other than tokens, as data: what one costs, how many a request reserves, the most it can use, and what
// the gateway measured itself. The built-in units (`seconds` of audio, `searches`, `characters`) and a price's own
// `units` (pages, images: schemas/price.schema.json) are the same kind of thing, read by the same code.
import { declaredLimit } from '../config/price-units.js';
import type { ModelConfig, PriceConfig, PriceCount } from '../config/types.js';

/** What the gateway knows of one request when it reserves and bounds it. */
export interface UnitRequest {
  /** The request's fields: its JSON body, or a form's text fields. */
  fields: Record<string, unknown>;
  /** A form's file fields, one entry a file. */
  files?: readonly string[];
  /** Seconds of audio the upload carries, as decoded (pipeline.durationOf); undefined when it could not be read. */
  seconds?: number;
  /** Characters of the field a `perMillionCharacters` price counts (pipeline.charactersOf). */
  characters?: number;
  /** Search units by Cohere's rule (pipeline.searches), and the documents x queries the request sends. */
  searches?: { estimate: number; most: number };
}

export interface PricedUnit {
  /** The name the usage mapping reports it under. */
  readonly name: string;
  /** Micro-units of currency one unit costs (0 for a unit declared free). */
  readonly micros: number;
  /** How many units the request reserves: never 0 for a priced unit the request can use. */
  reserve(model: ModelConfig, request: UnitRequest): number;
  /** The most units the request can use: reported usage above it is impossible. */
  most(model: ModelConfig, request: UnitRequest): number;
  /** What the gateway measured itself, charged when the upstream reports nothing (audio seconds, characters). */
  measured?(request: UnitRequest): number | undefined;
}

/** Audio seconds reserved for a `perMinute` model that declares no `media.maxAudioSeconds`: one hour. */
export const DEFAULT_MAX_AUDIO_SECONDS = 3600;

/** Items of a request field (a list's length, any other value 1, none 0), or files of a form under that name. */
function countOf(request: UnitRequest, field: string): number {
  const files = request.files?.filter((f) => f === field).length ?? 0;
  const value = request.fields[field];
  return files + (value === undefined || value === null ? 0 : Array.isArray(value) ? value.length : 1);
}

/** A declared count (schemas/price.schema.json `$defs/count`) for this model and request; a missing limit counts 0 (check-config refuses it). */
export function countFor(count: PriceCount, model: ModelConfig, request: UnitRequest): number {
  if (typeof count === 'number') return count;
  if ('countOf' in count) return countOf(request, count.countOf);
  return declaredLimit(model, count.limit) ?? 0;
}

const maxAudioSeconds = (model: ModelConfig) => declaredLimit(model, 'maxAudioSeconds') ?? DEFAULT_MAX_AUDIO_SECONDS;

/** The built-in units, each under the price field that prices it. */
function builtIn(price: PriceConfig): PricedUnit[] {
  const units: PricedUnit[] = [];
  if (price.perMinute) {
    units.push({
      name: 'seconds',
      micros: (price.perMinute * 1e6) / 60,
      // The decoded duration, by the started second; the model's most when it could not be decoded.
      reserve: (model, r) => (r.seconds === undefined ? maxAudioSeconds(model) : Math.ceil(r.seconds)),
      // A vendor rounds up: one second past the decoded duration, and never past the model's most.
      most: (model, r) => (r.seconds === undefined ? maxAudioSeconds(model) : Math.max(Math.ceil(r.seconds), Math.min(Math.ceil(r.seconds) + 1, maxAudioSeconds(model)))),
      measured: (r) => (r.seconds === undefined ? undefined : Math.ceil(r.seconds)),
    });
  }
  if (price.perThousandSearches) {
    units.push({ name: 'searches', micros: price.perThousandSearches * 1e3, reserve: (_m, r) => r.searches?.estimate ?? 0, most: (_m, r) => r.searches?.most ?? 0 });
  }
  if (price.perMillionCharacters) {
    units.push({ name: 'characters', micros: price.perMillionCharacters, reserve: (_m, r) => r.characters ?? 0, most: (_m, r) => r.characters ?? 0, measured: (r) => r.characters });
  }
  return units;
}

type UnitPrice = NonNullable<PriceConfig['units']>[string];

/** Micro-units one unit costs: per unit, per thousand or per million (0 when declared free). */
export const unitMicros = (unit: UnitPrice) => (unit.each ?? 0) * 1e6 + (unit.perThousand ?? 0) * 1e3 + (unit.perMillion ?? 0);

function declared(name: string, unit: UnitPrice): PricedUnit {
  if (unit.free) return { name, micros: 0, reserve: () => 0, most: () => Number.POSITIVE_INFINITY };
  const reserve = unit.reserve!;
  const most = unit.most ?? reserve;
  // At least one unit reserved: a request the count misses (a field left out) still holds the cap for a unit it may use.
  const reserved = (model: ModelConfig, r: UnitRequest) => Math.max(1, countFor(reserve, model, r));
  return { name, micros: unitMicros(unit), reserve: reserved, most: (model, r) => Math.max(countFor(most, model, r), reserved(model, r)) };
}

const cache = new WeakMap<PriceConfig, PricedUnit[]>();

/** Every unit a price counts besides tokens (a price object is fixed for a config's life: compiled once). */
export function pricedUnits(price: PriceConfig): readonly PricedUnit[] {
  let units = cache.get(price);
  if (!units) {
    units = [...builtIn(price), ...Object.entries(price.units ?? {}).map(([name, unit]) => declared(name, unit))];
    cache.set(price, units);
  }
  return units;
}

/** Micro-units of `counts` at the price's units. */
export function unitsMicros(price: PriceConfig, counts: Readonly<Record<string, number>> | undefined): number {
  if (!counts) return 0;
  let micros = 0;
  for (const unit of pricedUnits(price)) micros += (counts[unit.name] ?? 0) * unit.micros;
  return micros;
}

/** Micro-units a request reserves for the price's units on `model`. */
export function reservedUnitsMicros(model: ModelConfig, request: UnitRequest): number {
  let micros = 0;
  for (const unit of pricedUnits(model.price)) micros += unit.reserve(model, request) * unit.micros;
  return micros;
}

/** Why reported unit counts are impossible for the request, or undefined. */
export function impossibleUnits(model: ModelConfig, request: UnitRequest, counts: Readonly<Record<string, number>> | undefined): string | undefined {
  if (!counts) return undefined;
  for (const unit of pricedUnits(model.price)) {
    const n = counts[unit.name];
    const most = unit.most(model, request);
    if (n !== undefined && n > most) return `usage reports ${n} ${unit.name}, more than the request can use (${most})`;
  }
  return undefined;
}
