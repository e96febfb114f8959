// Optional OpenTelemetry tracing: the switch that loads it only when configured.
import type { LoadedConfig } from '../engine/loaded-config.js';
import { telemetryConfig, type Tracing } from './types.js';

export { telemetryConfig, type TelemetryConfig, type Tracing } from './types.js';

/** Loads the OpenTelemetry SDK and starts exporting, or returns undefined (and loads nothing) when no endpoint is set. */
export async function startTracing(config: LoadedConfig): Promise<Tracing | undefined> {
  const telemetry = telemetryConfig(config);
  if (!telemetry?.otlp.endpoint) return undefined;
  const { createOtelTracing } = await import('./otel.js');
  return createOtelTracing(telemetry);
}
