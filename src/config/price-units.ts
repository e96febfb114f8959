// The names a price and a usage mapping share: token classes, the built-in units and the price field of each, a price's
// own units; what check-config holds prices and usage mappings together by, and what billing prices them by.
import type { ModelConfig, PriceConfig } from './types.js';

/** Every key of a usage mapping that counts tokens; any other key names a unit. */
export const tokenKeys: ReadonlySet<string> = new Set(['inputTokens', 'outputTokens', 'reasoningTokens', 'cachedInputTokens', 'cacheWriteTokens', 'cacheWrite1hTokens', 'audioInputTokens', 'audioOutputTokens']);

/** The built-in units and the price field that prices each. */
export const builtInUnits: Readonly<Record<string, 'perMinute' | 'perThousandSearches' | 'perMillionCharacters'>> = { seconds: 'perMinute', searches: 'perThousandSearches', characters: 'perMillionCharacters' };

/** The units a price counts besides tokens, each with whether it costs anything (a unit declared free costs nothing). */
export function unitsOfPrice(price: PriceConfig): { name: string; priced: boolean }[] {
  const builtIn = Object.entries(builtInUnits).flatMap(([name, field]) => (price[field] ? [{ name, priced: true }] : []));
  return [...builtIn, ...Object.entries(price.units ?? {}).map(([name, unit]) => ({ name, priced: !unit.free }))];
}

/** A number the model declares in `media` or `limits` under `name`, if it is a non-negative finite number. */
export function declaredLimit(model: Pick<ModelConfig, 'media' | 'limits'>, name: string): number | undefined {
  const value = (model.media as Record<string, unknown> | undefined)?.[name] ?? (model.limits as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}
