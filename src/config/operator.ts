// The config as the admin CLI reads it: only the sections it uses (server, storage, admin, billing, network, webhooks),
// parsed, interpolated and validated against their own schemas, with no channel, protocol or mapping loaded, so a
// command answers at once. `npm run check-config` (and the gateway at start and reload) still check the whole file.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Ajv } from 'ajv';
import { ConfigError } from '../base/errors.js';
import { interpolateValue } from './env.js';
import { describeAjvError, schemasDir } from './schemas.js';
import type { CheckedConfig, GatewayConfig } from './types.js';
import { readYamlSource } from './yaml-source.js';

export type OperatorConfig = Pick<CheckedConfig, 'file' | 'baseDir' | 'gateway'>;

const SECTIONS = ['server', 'storage', 'admin', 'billing', 'network', 'webhooks'] as const;

export function loadOperatorConfig(file: string, env: NodeJS.ProcessEnv = process.env): OperatorConfig {
  let source;
  try {
    source = readYamlSource(file);
  } catch {
    throw new ConfigError([`${file}:1:1 / config file not found`]);
  }
  if (source.syntaxErrors.length) throw new ConfigError(source.syntaxErrors);
  const all = (interpolateValue(source.value ?? {}, env) ?? {}) as Record<string, unknown>;
  // The section schemas are checked against the meta-schema where the whole config is (config/schemas.ts, check-config):
  // compiling the meta-schema again here was a fifth of an admin command's time.
  const ajv = new Ajv({ strict: true, allErrors: true, useDefaults: true, allowUnionTypes: true, validateSchema: false, code: { optimize: false } });
  for (const section of SECTIONS) ajv.addSchema(JSON.parse(readFileSync(join(schemasDir, 'config', `${section}.json`), 'utf8')) as object);
  const validate = ajv.compile({ type: 'object', properties: Object.fromEntries(SECTIONS.map((s) => [s, { $ref: `config/${s}` }])) });
  const gateway: Record<string, unknown> = Object.fromEntries(SECTIONS.map((s) => [s, all[s] ?? {}]));
  const problems: string[] = [];
  if (!validate(gateway)) {
    for (const error of validate.errors ?? []) {
      const { pointer, key, message } = describeAjvError(error);
      problems.push(`${source.locate(key !== undefined ? pointer.slice(0, pointer.length - key.length - 1) : pointer, key)} ${pointer} ${message}`);
    }
  }
  const database = (gateway.storage as GatewayConfig['storage']).database;
  if (database.driver === 'postgres' && !database.url && !env.DATABASE_URL) problems.push(`${source.locate('/storage/database/driver')} /storage/database/driver database driver "postgres" needs a connection URL: set storage.database.url or DATABASE_URL`);
  if (problems.length) throw new ConfigError(problems);
  return { file, baseDir: dirname(file), gateway: gateway as GatewayConfig };
}
