// The background job that deletes expired spend reservations, and those of gateway processes provably gone (killed
// mid-request), so budget held by a crashed request comes back; one replica at a time, at start and every interval.
import type { FastifyBaseLogger } from 'fastify';
import type { CheckedConfig } from '../config/types.js';
import type { Db } from '../store/db.js';
import type { SpendStore } from './spend-store.js';
import { billingConfig } from './config.js';
import { withLease } from '../store/leases.js';
import { releaseDeadOwners, type ProcessIdentity } from './reservation-owners.js';

/** What the sweeper uses: the config's interval, the lease table, the spend store and a place to stop its timer. */
export interface SpendSweepDeps {
  readonly config: CheckedConfig;
  db: Db;
  instanceId: string;
  processIdentity: ProcessIdentity;
  spend: SpendStore;
  onClose(fn: () => void): void;
}

export function sweepSpendReservations(services: SpendSweepDeps, log: FastifyBaseLogger): Promise<void> {
  const intervalMs = billingConfig(services.config).sweepIntervalSeconds * 1000;
  const sweep = async () => {
    try {
      // One replica sweeps at a time; a crashed sweeper's lease runs out after one interval.
      await withLease(services.db, 'sweep:spend-reservations', services.instanceId, intervalMs, async () => {
        const swept = await services.spend.sweep(Date.now());
        if (swept) log.info({ swept }, 'expired spend reservations released');
        const orphaned = await releaseDeadOwners(services.db, services.processIdentity);
        if (orphaned) log.info({ released: orphaned }, 'spend reservations of stopped gateway processes released');
      });
    } catch (err) {
      log.error({ err }, 'sweeping spend reservations failed');
    }
  };
  const timer = setInterval(sweep, intervalMs);
  timer.unref();
  services.onClose(() => clearInterval(timer));
  return sweep();
}
