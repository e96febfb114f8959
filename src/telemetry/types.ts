// What tracing is, apart from the switch that loads it: its config section and the shape the app and the pipeline call.
import type { LoadedConfig } from '../engine/loaded-config.js';

export type { Tracing } from '../pipeline/tracing.js';

export interface TelemetryConfig {
  otlp: { endpoint?: string; headers: Record<string, string>; timeoutSeconds: number };
  serviceName: string;
  captureContent: boolean;
}

export const telemetryConfig = (config: LoadedConfig) => config.gateway.telemetry as TelemetryConfig;
