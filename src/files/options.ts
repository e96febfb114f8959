// The `files` config section as the code reads it (schemas/config/files.json fills every default).
import type { LoadedConfig } from '../config/types.js';

export interface FilesOptions {
  maxUploadBytes: number;
  ttlDays: number;
  uploadPurposes: string[];
  sweep: { intervalSeconds: number; batchSize: number; orphanGraceSeconds: number };
  signing: {
    urlLifetimeSeconds: number;
    graceSeconds: number;
    keys: { id: string; secret: string; retiredAt?: string }[];
  };
}

export function filesOptions(config: LoadedConfig): FilesOptions {
  return config.gateway.files as FilesOptions;
}
