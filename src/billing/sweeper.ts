// The background job that deletes expired spend reservations, so budget held by a crashed request comes back; one replica at a time.
import type { Job } from '../jobs.js';
import { billingConfig } from './config.js';
import { withLease } from '../store/leases.js';

export const sweepSpendReservations: Job = (services, log) => {
  const intervalMs = billingConfig(services.config).sweepIntervalSeconds * 1000;
  const sweep = async () => {
    try {
      // One replica sweeps at a time; a crashed sweeper's lease runs out after one interval.
      await withLease(services.db, 'sweep:spend-reservations', services.instanceId, intervalMs, async () => {
        const swept = await services.spend.sweep(Date.now());
        if (swept) log.info({ swept }, 'expired spend reservations released');
      });
    } catch (err) {
      log.error({ err }, 'sweeping spend reservations failed');
    }
  };
  const timer = setInterval(sweep, intervalMs);
  timer.unref();
  services.onClose(() => clearInterval(timer));
  return sweep();
};
