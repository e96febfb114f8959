// Typed views of the billing and rate-limits config sections (schemas/config/billing.json, rate-limits.json).
import type { CheckedConfig, ModelLimits } from '../config/types.js';

export interface BillingConfig {
  reservationTtlSeconds: number;
  sweepIntervalSeconds: number;
  settleBatchMs: number;
  /** IANA zone of the calendar budget periods follow. */
  timeZone: string;
  /** Limits the estimate assumes for a model that declares none (never sent upstream). */
  defaultLimits: ModelLimits;
}

export interface RateLimitsConfig {
  perKey: { requestsPerMinute: number };
  perWorkspace: { requestsPerMinute: number };
}

export const billingConfig = (config: Pick<CheckedConfig, 'gateway'>) => config.gateway.billing as BillingConfig;
export const rateLimitsConfig = (config: CheckedConfig) => config.gateway['rate-limits'] as RateLimitsConfig;
