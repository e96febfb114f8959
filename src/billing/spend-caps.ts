// Words the 402 a refused reservation answers: which budget, its period and amount, what is spent and held, and when it resets.
import { PaymentRequiredError } from '../base/errors.js';
import type { CapStanding } from './spend-store.js';

/** Caps are kept in micro-units of USD, the currency responses render. */
export const CAP_CURRENCY = 'USD';

export const formatMoney = (micros: number) => (micros / 1e6).toFixed(6).replace(/0{1,4}$/, '');

const periodWords = { total: 'spending cap', daily: 'daily spending cap', weekly: 'weekly spending cap', monthly: 'monthly spending cap' } as const;

/** "daily spending cap of this API key on model gpt-x": the budget a 402 names. */
export function budgetName(standing: Pick<CapStanding, 'scope' | 'model' | 'period'>): string {
  const owner = standing.scope === 'key' ? 'this API key' : "this key's workspace";
  return `${periodWords[standing.period]} of ${owner}${standing.model ? ` on model ${standing.model}` : ''}`;
}

export function capExhaustedError(standing: CapStanding, requestedMicros: number): PaymentRequiredError {
  const left = Math.max(0, standing.capMicros - standing.spentMicros - standing.reservedMicros);
  const resetsAt = standing.resetsAt === null ? null : new Date(standing.resetsAt).toISOString();
  const message =
    `${budgetName(standing)} is exhausted: cap ${formatMoney(standing.capMicros)} ${CAP_CURRENCY}, ` +
    `spent ${formatMoney(standing.spentMicros)}, reserved by requests in flight ${formatMoney(standing.reservedMicros)}, ` +
    `left ${formatMoney(left)}; this request may cost up to ${formatMoney(requestedMicros)}; ` +
    (resetsAt ? `it resets at ${resetsAt}` : 'it does not reset');
  return new PaymentRequiredError(
    message,
    {
      cap: {
        scope: standing.scope,
        id: standing.id,
        model: standing.model,
        period: standing.period,
        amount: standing.capMicros / 1e6,
        spent: standing.spentMicros / 1e6,
        reserved: standing.reservedMicros / 1e6,
        requested: requestedMicros / 1e6,
        currency: CAP_CURRENCY,
        resets_at: resetsAt,
      },
    },
    resetsAt ? { 'x-budget-reset': resetsAt } : undefined,
  );
}
