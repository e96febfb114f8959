// Reads the caps that apply to a key (its own and its workspace's) and words the 402 a refused reservation answers.
import type { AuthContext } from '../auth/authenticate.js';
import { PaymentRequiredError } from '../errors.js';
import type { Db } from '../store/database.js';
import type { CapStanding, SpendCaps } from './spend-store.js';

/** Read at every reservation, so a cap changed by the admin CLI applies to the next request without a restart. */
export async function readSpendCaps(db: Db, auth: AuthContext): Promise<SpendCaps> {
  const row = await db
    .selectFrom('api_keys')
    .innerJoin('workspaces', 'workspaces.id', 'api_keys.workspace_id')
    .select(['api_keys.spend_cap_micros as keyCap', 'workspaces.spend_cap_micros as workspaceCap'])
    .where('api_keys.id', '=', auth.keyId)
    .executeTakeFirst();
  return { keyCapMicros: row?.keyCap ?? null, workspaceCapMicros: row?.workspaceCap ?? null };
}

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
