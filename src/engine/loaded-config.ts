// The config the gateway runs on: the config layer's checked config plus its compiled Liquid (text templates and mappings).
import type { CheckedConfig } from '../config/types.js';
import type { TemplateSet } from './liquid.js';

export interface LoadedConfig extends CheckedConfig {
  templates: TemplateSet;
}
