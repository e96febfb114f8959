// The `files` config section as the code reads it (schemas/config/files.json fills every default).
import type { FilesConfig } from '../config/types.js';
import type { LoadedConfig } from '../engine/loaded-config.js';

export type FilesOptions = FilesConfig;

export function filesOptions(config: LoadedConfig): FilesOptions {
  return config.gateway.files;
}
