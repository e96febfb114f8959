// The config the gateway runs on: the config layer's checked config plus its compiled Liquid (text templates and mappings).
import type { CheckedConfig } from '../config/types.js';
import type { GuardrailSetup } from './guardrails.js';
import type { TemplateSet } from './liquid.js';

export interface LoadedConfig extends CheckedConfig {
  templates: TemplateSet;
  /** The operator's request schemas (endpoints.schemasDir, the overlay's schemas/requests/), $id to JSON text: what a reload compares. */
  operatorSchemas: Map<string, string>;
  /** The guardrails (guardrails/ files) and the chains they form; absent when none is declared (a call then checks nothing). */
  guardrails?: GuardrailSetup;
  /**
   * The environment the config was loaded with, before the overlay's gateway.env: a reload reads the same (the running
   * gateway's, never a CLI's). Not enumerable, so never serialised with the config.
   */
  readonly environment?: NodeJS.ProcessEnv;
}
