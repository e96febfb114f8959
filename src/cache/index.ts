// The response cache's entry point for the services: the store config.yaml `cache:` names, opened once at start, its
// metrics registered and its closing queued with the services' own.
import type { Registry } from 'prom-client';
import { cacheConfig } from '../config/cache.js';
import type { CheckedConfig } from '../config/types.js';
import { gatewayLogger } from '../http/log-format.js';
import { watchResponseCache } from './metrics.js';
import { ResponseCache } from './stage.js';
import { ResponseStore } from './store.js';

export { ResponseCache } from './stage.js';

/**
 * Opens the store (memory, or Redis: config.yaml cache.url, else storage.cache.url) and the stage over it. `now` is the
 * clock the memory store's TTLs are judged by (the services' clock; Redis keeps its own).
 */
export async function openResponseCache(config: CheckedConfig, registry: Registry, closers: (() => Promise<void> | void)[], now: () => number = Date.now): Promise<ResponseCache> {
  const settings = cacheConfig(config);
  const storage = config.gateway.storage.cache as { url?: string };
  const log = gatewayLogger({ level: config.gateway.server.logLevel, name: 'response-cache' });
  const cache = new ResponseCache(await ResponseStore.open(settings, storage.url, log, now), settings);
  watchResponseCache(registry, cache);
  closers.push(() => cache.store.close());
  return cache;
}
