// Where the config file is, and where the paths in its storage section point: the little the admin CLI needs before
// (or instead of) loading the whole config.
import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { CheckedConfig } from './types.js';

/** `--config PATH`, then GATEWAY_CONFIG, then config.yaml, then config.example.yaml. */
export function resolveConfigPath(argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string {
  const flag = argv.indexOf('--config');
  if (flag >= 0 && argv[flag + 1]) return resolve(cwd, argv[flag + 1]);
  const inline = argv.find((a) => a.startsWith('--config='));
  if (inline) return resolve(cwd, inline.slice('--config='.length));
  if (env.GATEWAY_CONFIG) return resolve(cwd, env.GATEWAY_CONFIG);
  const local = resolve(cwd, 'config.yaml');
  return existsSync(local) ? local : resolve(cwd, 'config.example.yaml');
}

/** Resolves a storage path from the config: absolute paths and ':memory:' as given, others under storage.dataDir. */
export function dataPathFor(config: Pick<CheckedConfig, 'baseDir' | 'gateway'>): (path: string) => string {
  const dataDir = resolve(config.baseDir, config.gateway.storage.dataDir);
  return (path) => (path === ':memory:' || isAbsolute(path) ? path : resolve(dataDir, path));
}
