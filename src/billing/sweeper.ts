// The background job that deletes expired spend reservations, so budget held by a crashed request comes back.
import type { Job } from '../jobs.js';
import { billingConfig } from './config.js';

export const sweepSpendReservations: Job = (services, log) => {
  const sweep = async () => {
    try {
      const swept = await services.spend.sweep(Date.now());
      if (swept) log.info({ swept }, 'expired spend reservations released');
    } catch (err) {
      log.error({ err }, 'sweeping spend reservations failed');
    }
  };
  const timer = setInterval(sweep, billingConfig(services.config).sweepIntervalSeconds * 1000);
  timer.unref();
  services.onClose(() => clearInterval(timer));
  return sweep();
};
