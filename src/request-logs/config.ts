// The typed view of the requestLogs config section (schemas/config/request-logs.json).
import type { LoadedConfig } from '../engine/loaded-config.js';
import type { RequestLogsConfig } from '../config/generated/config-types.js';

export type { RequestLogsConfig } from '../config/generated/config-types.js';

export const requestLogsConfig = (config: Pick<LoadedConfig, 'gateway'>) => config.gateway.requestLogs as RequestLogsConfig;

/** Whether bodies are captured for a workspace: its own override (by id or name) first, else the global switch. */
export function capturesBodies(config: RequestLogsConfig, workspace: { id: string; name?: string }): boolean {
  const own = config.workspaces?.[workspace.id] ?? (workspace.name === undefined ? undefined : config.workspaces?.[workspace.name]);
  return own?.captureBodies ?? config.captureBodies ?? false;
}
