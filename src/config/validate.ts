// The validate stage: each file read is checked against its schema (strict, defaults filled in, ${VAR} expanded first).
import type { ConfigSources } from './read.js';
import type { Problems } from './problems.js';
import { describeAjvError, type CollectedMapping, type SchemaRegistry } from './schemas.js';
import type { ChannelSchema, EndpointConfig, GatewayConfig, GuardrailSchema, McpServerSchema, ProtocolSchema, RouteSchema } from './types.js';
import { interpolateValue, type UnsetReference } from './env.js';
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
  mcp: ValidatedFile<McpServerSchema>[];
  routes: ValidatedFile<RouteSchema | RouteSchema[]>[];
  guardrails: ValidatedFile<GuardrailSchema | GuardrailSchema[]>[];
}

/** What a file says for one load: the problems that refuse it and the warnings that do not. */
interface Report {
  problems: Problems;
  warnings: string[];
}

/** The variables a channel file lists in `requiresEnv` (its own and its credentials'): while one is unset the channel starts disabled, which is no error. */
function variablesDisablingChannel(raw: unknown): Set<string> {
  const file = raw as { requiresEnv?: unknown; credential?: unknown } | undefined;
  const credentials = Array.isArray(file?.credential) ? file.credential : [file?.credential];
  const lists = [file?.requiresEnv, ...credentials.map((c) => (c as { requiresEnv?: unknown } | undefined)?.requiresEnv)];
  return new Set(lists.flatMap((list) => (Array.isArray(list) ? list.filter((v): v is string => typeof v === 'string') : [])));
}

/**
 * Each `${VAR}` left empty for want of its variable: where the emptied field then fails its schema, one problem naming the
 * variable takes the place of that field's errors; where the schema lets the field be empty, a warning.
 */
function reportUnset(source: YamlSource, unset: UnsetReference[], errors: ReturnType<typeof describeAjvError>[], report: Report): ReturnType<typeof describeAjvError>[] {
  let left = errors;
  for (const { pointer, variable } of unset) {
    const within = (error: { pointer: string }) => error.pointer === pointer || error.pointer.startsWith(`${pointer}/`);
    const message = `environment variable ${variable} is not set, and "\${${variable}}" has no default`;
    if (left.some(within)) {
      report.problems.add(source, pointer, `${message} (set it, or write "\${${variable}:-default}")`);
      left = left.filter((error) => !within(error));
    } else {
      report.warnings.push(`${source.locate(pointer)} ${pointer} ${message}: the field is empty`);
    }
  }
  return left;
}

function validateFile<T>(source: YamlSource, schemaId: string, registry: SchemaRegistry, report: Report, env: NodeJS.ProcessEnv): ValidatedFile<T> {
  if (source.syntaxErrors.length) return { source, mappings: [] };
  const unset: UnsetReference[] = [];
  let value = interpolateValue(source.value ?? {}, env, unset) as Record<string, unknown>;
  if (schemaId === 'config') {
    // Every section is validated, so a section left out gets its defaults.
    value = { ...value };
    for (const section of registry.configSections) value[section.slice('config/'.length)] ??= {};
  }
  const validate = registry.validator(schemaId);
  const valid = validate(value);
  const mappings = registry.takeMappings();
  // An `if` error ("must match then schema") only repeats the errors of the branch it took, which are reported.
  const errors = valid ? [] : (validate.errors ?? []).filter((e) => e.keyword !== 'if').map(describeAjvError);
  const excused = schemaId === 'channel' ? variablesDisablingChannel(source.value) : new Set<string>();
  // A field emptied by a variable the channel requires fails for that reason alone: the channel loads, and starts disabled.
  const emptied = unset.filter((u) => excused.has(u.variable)).map((u) => u.pointer);
  const own = errors.filter((error) => !emptied.some((pointer) => error.pointer === pointer || error.pointer.startsWith(`${pointer}/`)));
  const left = reportUnset(source, unset.filter((u) => !excused.has(u.variable)), own, report);
  for (const { pointer, key, message } of left) report.problems.add(source, pointer, message, key);
  return valid || (errors.length > 0 && own.length === 0) ? { source, value: value as T, mappings } : { source, mappings };
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

/** The flow a `pipeline.dialect` named before `flow` existed (the chat flow served three wire dialects under their own names). */
const legacyFlows: Readonly<Record<string, string>> = { 'openai-chat': 'chat', 'anthropic-messages': 'chat', 'openai-responses': 'chat', 'openai-images': 'images' };

/**
 * `pipeline.flow` and `pipeline.dialect` filled in: an entry written before `flow` existed named the flow in `dialect`
 * (`dialect: relay`); it still works, with a warning (file:line:col). The dialect defaults to the flow's name.
 */
function normalisePipeline(entry: EndpointConfig, source: ValidatedFile<EndpointConfig[]>['source'], index: number, report: { problems: Problems; warnings: string[] }): void {
  const pipeline = entry.pipeline;
  const at = `/${index}/pipeline`;
  if (!pipeline) return;
  if (!pipeline.flow && !pipeline.dialect) return report.problems.add(source, at, `endpoint "${entry.name}" names no flow: write "flow: <name>" (chat, images, evaluate, relay, task)`);
  if (pipeline.flow === 'task' && !pipeline.task) report.problems.add(source, at, `endpoint "${entry.name}" runs the task flow: declare its family in "task" (object, idPrefix, purpose, bill)`);
  if (pipeline.flow !== 'task' && pipeline.operation === undefined) report.problems.add(source, at, `endpoint "${entry.name}" names no operation: write "operation: <name>" (a protocol operation serving its kind)`);
  const warnings = report.warnings;
  if (!pipeline.flow) {
    const flow = legacyFlows[pipeline.dialect!] ?? pipeline.dialect!;
    const pointer = `/${index}/pipeline/dialect`;
    const wire = flow === pipeline.dialect ? '' : `, dialect: ${pipeline.dialect}`;
    warnings.push(`${source.locate(pointer)} ${pointer} deprecated: "dialect" names the client's wire dialect, no longer the flow; write "flow: ${flow}${wire}" (read as flow "${flow}")`);
    pipeline.flow = flow;
  }
  pipeline.dialect ??= pipeline.flow;
}

/** Every entry's requestSchema names a schema the registry holds, and no two entries share a name or a path and method. */
function checkCatalogue(catalogue: ValidatedFile<EndpointConfig[]>[], registry: SchemaRegistry, problems: Problems, warnings: string[]): void {
  const names = new Set<string>();
  const routes = new Set<string>();
  for (const { source, value } of catalogue) {
    value?.forEach((entry, index) => {
      normalisePipeline(entry, source, index, { problems, warnings });
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

export function validateConfig(sources: ConfigSources, registry: SchemaRegistry, problems: Problems, env: NodeJS.ProcessEnv, warnings: string[]): ValidatedConfig {
  addOperatorSchemas(sources, registry, problems);
  const report = { problems, warnings };
  const catalogue = sources.catalogue.map((source) => validateFile<EndpointConfig[]>(source, 'catalogue', registry, report, env));
  checkCatalogue(catalogue, registry, problems, warnings);
  return {
    sources,
    root: validateFile<GatewayConfig>(sources.root, 'config', registry, report, env),
    protocols: sources.protocols.map((source) => validateFile<ProtocolSchema>(source, 'protocol', registry, report, env)),
    channels: sources.channels.map((source) => validateFile<ChannelSchema>(source, 'channel', registry, report, env)),
    catalogue,
    mcp: sources.mcp.map((source) => validateFile<McpServerSchema>(source, 'mcp', registry, report, env)),
    routes: sources.routes.map((source) => validateFile<RouteSchema | RouteSchema[]>(source, 'route', registry, report, env)),
    guardrails: sources.guardrails.map((source) => validateFile<GuardrailSchema | GuardrailSchema[]>(source, 'guardrail', registry, report, env)),
  };
}
