// The `files` config section as the code reads it (schemas/config/files.json fills every default).
import type { FilesConfig, LoadedConfig } from '../config/types.js';

export type FilesOptions = FilesConfig;

export function filesOptions(config: LoadedConfig): FilesOptions {
  return config.gateway.files;
}
