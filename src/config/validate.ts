// The validate stage: each file read is checked against its schema (strict, defaults filled in, ${VAR} expanded first).
import type { ConfigSources } from './read.js';
import type { Problems } from './problems.js';
import { describeAjvError, type CollectedMapping, type SchemaRegistry } from './schemas.js';
import type { ChannelSchema, EndpointConfig, GatewayConfig, ProtocolSchema, RouteSchema } from './types.js';
import { interpolateValue } from './env.js';
import { displayPath, type YamlSource } from './yaml-source.js';

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
  routes: ValidatedFile<RouteSchema | RouteSchema[]>[];
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
  // An `if` error ("must match then schema") only repeats the errors of the branch it took, which are reported.
  for (const error of (validate.errors ?? []).filter((e) => e.keyword !== 'if')) {
    const { pointer, key, message } = describeAjvError(error);
    problems.add(source, pointer, message, key);
  }
  return { source, mappings };
}

/** Adds the operator's JSON Schemas (endpoints.schemasDir) to the registry; a broken one, or an id already taken, is a problem. */
function addOperatorSchemas(sources: ConfigSources, registry: SchemaRegistry, problems: Problems): void {
  for (const { file, value, problem } of sources.schemas) {
    const id = (value as { $id?: unknown } | undefined)?.$id;
    if (problem) {
      problems.list.push(problem);
      continue;
    }
    const why = typeof id !== 'string' ? 'the schema has no "$id"' : registry.ajv.getSchema(id) ? `a schema with $id "${id}" already exists` : undefined;
    if (why) {
      problems.list.push(`${displayPath(file)}:1:1 / ${why}`);
      continue;
    }
    try {
      registry.ajv.addSchema(value as object);
      registry.ajv.getSchema(id as string);
    } catch (err) {
      problems.list.push(`${displayPath(file)}:1:1 / ${(err as Error).message.split('\n')[0]}`);
    }
  }
}

/** Every entry's requestSchema names a schema the registry holds, and no two entries share a name or a path and method. */
function checkCatalogue(catalogue: ValidatedFile<EndpointConfig[]>[], registry: SchemaRegistry, problems: Problems): void {
  const names = new Set<string>();
  const routes = new Set<string>();
  for (const { source, value } of catalogue) {
    value?.forEach((entry, index) => {
      if (entry.requestSchema && !registry.ajv.getSchema(entry.requestSchema)) problems.add(source, `/${index}/requestSchema`, `no schema with $id "${entry.requestSchema}" (schemas/, or endpoints.schemasDir)`);
      if (names.has(entry.name)) problems.add(source, `/${index}/name`, `endpoint "${entry.name}" is already declared`);
      names.add(entry.name);
      for (const method of entry.method) {
        if (routes.has(`${method} ${entry.path}`)) problems.add(source, `/${index}/path`, `${method} ${entry.path} is already served by another endpoint`);
        routes.add(`${method} ${entry.path}`);
      }
    });
  }
}

export function validateConfig(sources: ConfigSources, registry: SchemaRegistry, problems: Problems, env: NodeJS.ProcessEnv): ValidatedConfig {
  addOperatorSchemas(sources, registry, problems);
  const catalogue = sources.catalogue.map((source) => validateFile<EndpointConfig[]>(source, 'catalogue', registry, problems, env));
  checkCatalogue(catalogue, registry, problems);
  return {
    sources,
    root: validateFile<GatewayConfig>(sources.root, 'config', registry, problems, env),
    protocols: sources.protocols.map((source) => validateFile<ProtocolSchema>(source, 'protocol', registry, problems, env)),
    channels: sources.channels.map((source) => validateFile<ChannelSchema>(source, 'channel', registry, problems, env)),
    catalogue,
    routes: sources.routes.map((source) => validateFile<RouteSchema | RouteSchema[]>(source, 'route', registry, problems, env)),
  };
}
