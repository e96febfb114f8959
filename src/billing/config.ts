// Typed views of the billing and rate-limits config sections (schemas/config/billing.json, rate-limits.json).
import type { LoadedConfig } from '../compile/loaded-config.js';

export interface BillingConfig {
  reservationTtlSeconds: number;
  sweepIntervalSeconds: number;
  settleBatchMs: number;
}

export interface RateLimitsConfig {
  perKey: { requestsPerMinute: number };
  perWorkspace: { requestsPerMinute: number };
}

export const billingConfig = (config: LoadedConfig) => config.gateway.billing as BillingConfig;
export const rateLimitsConfig = (config: LoadedConfig) => config.gateway['rate-limits'] as RateLimitsConfig;
