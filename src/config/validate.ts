// The validate stage: each file read is checked against its schema (strict, defaults filled in, ${VAR} expanded first).
import type { ConfigSources } from './read.js';
import type { Problems } from './problems.js';
import { describeAjvError, type CollectedMapping, type SchemaRegistry } from './schemas.js';
import type { ChannelSchema, EndpointConfig, GatewayConfig, ProtocolSchema } from './types.js';
import { interpolateValue } from './env.js';
import type { YamlSource } from './yaml-source.js';

/** One file after validation: its value when valid, and the mappings its schema marked (collected valid or not). */
export interface ValidatedFile<T> {
  source: YamlSource;
  value?: T;
  mappings: CollectedMapping[];
}

export interface ValidatedConfig {
  sources: ConfigSources;
  root: ValidatedFile<GatewayConfig>;
  protocols: ValidatedFile<ProtocolSchema>[];
  channels: ValidatedFile<ChannelSchema>[];
  catalogue: ValidatedFile<EndpointConfig[]>[];
}

function validateFile<T>(source: YamlSource, schemaId: string, registry: SchemaRegistry, problems: Problems, env: NodeJS.ProcessEnv): ValidatedFile<T> {
  if (source.syntaxErrors.length) return { source, mappings: [] };
  let value = interpolateValue(source.value ?? {}, env) as Record<string, unknown>;
  if (schemaId === 'config') {
    // Every section is validated, so a section left out gets its defaults.
    value = { ...value };
    for (const section of registry.configSections) value[section.slice('config/'.length)] ??= {};
  }
  const validate = registry.validator(schemaId);
  const valid = validate(value);
  const mappings = registry.takeMappings();
  if (valid) return { source, value: value as T, mappings };
  for (const error of validate.errors ?? []) {
    const { pointer, key, message } = describeAjvError(error);
    problems.add(source, pointer, message, key);
  }
  return { source, mappings };
}

export function validateConfig(sources: ConfigSources, registry: SchemaRegistry, problems: Problems, env: NodeJS.ProcessEnv): ValidatedConfig {
  return {
    sources,
    root: validateFile<GatewayConfig>(sources.root, 'config', registry, problems, env),
    protocols: sources.protocols.map((source) => validateFile<ProtocolSchema>(source, 'protocol', registry, problems, env)),
    channels: sources.channels.map((source) => validateFile<ChannelSchema>(source, 'channel', registry, problems, env)),
    catalogue: sources.catalogue.map((source) => validateFile<EndpointConfig[]>(source, 'catalogue', registry, problems, env)),
  };
}
