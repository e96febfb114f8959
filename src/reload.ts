// Hot reload (SIGHUP, or `npm run admin -- reload`): check the config file again and swap the runtime snapshot, or keep serving.
import type { FastifyBaseLogger } from 'fastify';
import { ConfigError } from './errors.js';
import type { Services } from './services.js';

/** Sections built into long-lived services at start (database, blob store, listeners, limits): they change at a restart. */
function sectionsNeedingRestart(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((s) => s !== 'channels' && JSON.stringify(before[s]) !== JSON.stringify(after[s]));
}

export async function reloadConfig(services: Services, log: FastifyBaseLogger): Promise<boolean> {
  // Loaded here, not at the top: the admin CLI imports PID_FILE from this module and needs none of the config loader.
  const { summarize } = await import('./config/load.js');
  const before = services.config;
  try {
    const next = await services.reload();
    for (const warning of next.warnings) log.warn(warning);
    log.info(`reloaded ${before.file}: ${summarize(next)}; ${services.runtime.draining} request(s) finishing on the previous config`);
    const restart = sectionsNeedingRestart(before.gateway, next.gateway);
    if (restart.length) log.warn({ sections: restart }, `config sections ${restart.join(', ')} changed; they apply at the next restart (a reload swaps channels, protocols and models)`);
    return true;
  } catch (err) {
    if (err instanceof ConfigError) log.error({ problems: err.problems }, `reload refused, the running config keeps serving:\n${err.problems.join('\n')}`);
    else log.error({ err }, 'reload failed; the running config keeps serving');
    return false;
  }
}

/** Where a running gateway writes its pid, so `npm run admin -- reload` can signal it. */
export const PID_FILE = 'gateway.pid';
