// Where the config file is, and what is said about a loaded one. Loading itself (read -> validate -> cross-check -> compile ->
// route) is src/compile/load-config.ts: compiling mappings belongs to the layer above config.
import type { CheckedConfig } from './types.js';

export { dataPathFor, resolveConfigPath } from './locate.js';

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

/**
 * What the startup log warns of, once per process group (the primary of several workers says it, not each worker):
 * the config's warnings, and a public URL left unset.
 */
export function startupWarnings(config: Pick<CheckedConfig, 'gateway'> & { warnings: readonly string[] }): string[] {
  const warnings = [...config.warnings];
  if (!config.gateway.server.publicUrl) {
    warnings.push('server.publicUrl is not set: signed file links point at the address each request arrived on (or a Host listed in server.trustedHosts); set server.publicUrl to the address clients use');
  }
  return warnings;
}
