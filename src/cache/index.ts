// The response cache's entry point for the services: the store config.yaml `cache:` names, opened once at start.
import { cacheConfig } from '../config/cache.js';
import type { CheckedConfig } from '../config/types.js';
import { ResponseCache } from './stage.js';
import { ResponseStore, type StoreLog } from './store.js';

export { ResponseCache } from './stage.js';
export { watchResponseCache } from './metrics.js';

/** Opens the store (memory, or Redis: config.yaml cache.url, else storage.cache.url) and the stage over it. */
export async function openResponseCache(config: CheckedConfig, log: StoreLog): Promise<ResponseCache> {
  const settings = cacheConfig(config);
  const storage = config.gateway.storage.cache as { url?: string };
  return new ResponseCache(await ResponseStore.open(settings, storage.url, log), settings);
}
