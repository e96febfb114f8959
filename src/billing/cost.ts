// Turns upstream-reported usage and a model's price into integer micro-units of its currency.
import type { PriceConfig } from '../config/types.js';

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens served from the upstream's prompt cache; counted inside inputTokens. */
  cachedInputTokens?: number;
  /** Output tokens spent reasoning, where the upstream counts them apart; counted inside outputTokens (reported, never priced apart). */
  reasoningTokens?: number;
}

export interface Cost {
  micros: number;
  currency: string;
}

/** Cost of tokens plus the per-request price. Cached input tokens use their own price when one is set. */
export function tokenCostMicros(price: PriceConfig, usage: TokenUsage): number {
  const cached = Math.min(usage.cachedInputTokens ?? 0, usage.inputTokens);
  const cachedPrice = price.cachedInputPerMillion ?? price.inputPerMillion ?? 0;
  const perMillionUnits =
    (usage.inputTokens - cached) * (price.inputPerMillion ?? 0) + cached * cachedPrice + usage.outputTokens * (price.outputPerMillion ?? 0);
  // Prices are per million tokens in currency units, so the sum is already in micro-units.
  return Math.round(perMillionUnits + (price.perRequest ?? 0) * 1e6);
}

export function renderCost(cost: Cost): { amount: number; currency: string } {
  return { amount: cost.micros / 1e6, currency: cost.currency };
}

export function toMicros(amount: number): number {
  return Math.round(amount * 1e6);
}
