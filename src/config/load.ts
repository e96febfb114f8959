// Where the config file is, and what is said about a loaded one. Loading itself (read -> validate -> cross-check -> compile ->
// route) is src/compile/load-config.ts: compiling mappings belongs to the layer above config.
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

/** Freezes a loaded config all the way down, leaving the objects in `skip` (compiled templates, the Ajv) as they are. */
export function deepFreeze<T>(value: T, skip: Set<unknown>): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value) || skip.has(value)) return value;
  if (value instanceof Map) {
    for (const v of value.values()) deepFreeze(v, skip);
    return value;
  }
  for (const v of Object.values(value)) deepFreeze(v, skip);
  return Object.freeze(value);
}

/** One line per channel kind count, for check-config and the startup log. */
export function summarize(config: CheckedConfig & { templates: { size: number } }): string {
  const enabled = config.channels.filter((c) => !c.disabledReason).length;
  const kinds = new Map<string, number>();
  for (const routes of config.models.values()) kinds.set(routes[0].model.kind, (kinds.get(routes[0].model.kind) ?? 0) + 1);
  const perKind = [...kinds].map(([k, n]) => `${k} ${n}`).join(', ') || 'none';
  return `${config.channels.length} channel(s) (${enabled} enabled), ${config.protocols.size} protocol(s), ${config.models.size} model(s): ${perKind}; ${config.endpoints.length} endpoint(s), ${config.templates.size} template(s)`;
}

/** Resolves a storage path from the config: absolute paths and ':memory:' as given, others under storage.dataDir. */
export function dataPathFor(config: Pick<CheckedConfig, 'baseDir' | 'gateway'>): (path: string) => string {
  const dataDir = resolve(config.baseDir, config.gateway.storage.dataDir);
  return (path) => (path === ':memory:' || isAbsolute(path) ? path : resolve(dataDir, path));
}
