// Turns upstream-reported usage and a model's price into integer micro-units of its currency.
import type { PriceConfig } from '../config/types.js';
import { unitsMicros } from './units.js';

export interface TokenUsage {
  /** Every input token, whatever its class: the classes below are counted inside it. */
  inputTokens: number;
  /** Output tokens, reasoning and audio included. */
  outputTokens: number;
  /** Input tokens read from the upstream's prompt cache. */
  cachedInputTokens?: number;
  /** Input tokens written to the prompt cache (every write, the 1-hour ones included). */
  cacheWriteTokens?: number;
  /** Of the cache writes, those to the 1-hour cache. */
  cacheWrite1hTokens?: number;
  /** Input tokens that were audio. */
  audioInputTokens?: number;
  /** Output tokens that were audio. */
  audioOutputTokens?: number;
  /** Output tokens spent reasoning, where the upstream counts them apart; counted inside outputTokens (reported, never priced apart). */
  reasoningTokens?: number;
  /**
   * Units other than tokens, by name (billing/units.ts): `seconds` of audio (`perMinute`), `searches` (`perThousandSearches`),
   * `characters` (`perMillionCharacters`, counted by the gateway), and a price's own `units` (pages, images).
   */
  units?: Record<string, number>;
}

export interface Cost {
  micros: number;
  currency: string;
}

/** Takes up to `want` of what is left, so a class never counts more tokens than the total it is part of. */
function share(want: number | undefined, left: { n: number }): number {
  const n = Math.min(Math.max(0, want ?? 0), left.n);
  left.n -= n;
  return n;
}

/**
 * Cost of usage plus the per-request price: each token class at its own price (falling back to the base input or output
 * price), and the units priced otherwise (billing/units.ts: audio seconds, search units, characters, a price's own units). A `free` model costs 0.
 */
export function tokenCostMicros(price: PriceConfig, usage: TokenUsage): number {
  const input = price.inputPerMillion ?? 0;
  const output = price.outputPerMillion ?? 0;
  const write = price.cacheWritePerMillion ?? input;
  const left = { n: usage.inputTokens };
  const cached = share(usage.cachedInputTokens, left);
  const writes = share(usage.cacheWriteTokens, left);
  const writes1h = Math.min(Math.max(0, usage.cacheWrite1hTokens ?? 0), writes);
  const audioIn = share(usage.audioInputTokens, left);
  const outLeft = { n: usage.outputTokens };
  const audioOut = share(usage.audioOutputTokens, outLeft);
  const perMillionUnits =
    left.n * input +
    cached * (price.cachedInputPerMillion ?? input) +
    (writes - writes1h) * write +
    writes1h * (price.cacheWrite1hPerMillion ?? write) +
    audioIn * (price.audioInputPerMillion ?? input) +
    outLeft.n * output +
    audioOut * (price.audioOutputPerMillion ?? output);
  // Prices are per million tokens in currency units, so the sum is already in micro-units.
  if (price.free) return 0;
  return Math.round(perMillionUnits + unitsMicros(price, usage.units) + (price.perRequest ?? 0) * 1e6);
}

const tokenPrices = ['inputPerMillion', 'outputPerMillion', 'cachedInputPerMillion', 'cacheWritePerMillion', 'cacheWrite1hPerMillion', 'audioInputPerMillion', 'audioOutputPerMillion'] as const;

/** Whether the price counts tokens (any class): a call reporting none is then charged its reservation. */
export const pricesTokens = (price: PriceConfig): boolean => tokenPrices.some((name) => price[name]);

/** The highest price per million of any input class and of any output class: the worst case of tokens whose class is unknown yet. */
export function dearestTokenPrices(price: PriceConfig): { input: number; output: number } {
  const input = price.inputPerMillion ?? 0;
  const output = price.outputPerMillion ?? 0;
  const write = price.cacheWritePerMillion ?? input;
  return {
    input: Math.max(input, price.cachedInputPerMillion ?? 0, write, price.cacheWrite1hPerMillion ?? write, price.audioInputPerMillion ?? 0),
    output: Math.max(output, price.audioOutputPerMillion ?? 0),
  };
}

export function renderCost(cost: Cost): { amount: number; currency: string } {
  return { amount: cost.micros / 1e6, currency: cost.currency };
}

export function toMicros(amount: number): number {
  return Math.round(amount * 1e6);
}
