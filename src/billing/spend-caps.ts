// Words the 402 a refused reservation answers: which cap, its amount, what is spent and what requests in flight hold.
import { PaymentRequiredError } from '../errors.js';
import type { CapStanding } from './spend-store.js';

/** Caps are kept in micro-units of USD, the currency responses render. */
export const CAP_CURRENCY = 'USD';

export const formatMoney = (micros: number) => (micros / 1e6).toFixed(6).replace(/0{1,4}$/, '');

export function capExhaustedError(standing: CapStanding, requestedMicros: number): PaymentRequiredError {
  const left = Math.max(0, standing.capMicros - standing.spentMicros - standing.reservedMicros);
  const owner = standing.scope === 'key' ? 'this API key' : "this key's workspace";
  const message =
    `spending cap of ${owner} is exhausted: cap ${formatMoney(standing.capMicros)} ${CAP_CURRENCY}, ` +
    `spent ${formatMoney(standing.spentMicros)}, reserved by requests in flight ${formatMoney(standing.reservedMicros)}, ` +
    `left ${formatMoney(left)}; this request may cost up to ${formatMoney(requestedMicros)}`;
  return new PaymentRequiredError(message, {
    cap: {
      scope: standing.scope,
      id: standing.id,
      amount: standing.capMicros / 1e6,
      spent: standing.spentMicros / 1e6,
      reserved: standing.reservedMicros / 1e6,
      requested: requestedMicros / 1e6,
      currency: CAP_CURRENCY,
    },
  });
}
