// The one config loader, five stages: read -> validate -> cross-check (src/config) -> compile (mappings and their fixtures,
// here) -> route (src/config); then the config is frozen. check-config, startup and reload all run exactly this.
import { join } from 'node:path';
import { declareScopes } from '../auth/scopes.js';
import { crossCheckConfig } from '../config/cross-check.js';
import { checkModelIds } from '../config/cross-check-models.js';
import { deepFreeze } from '../config/load.js';
import { Problems } from '../config/problems.js';
import { readConfigFiles } from '../config/read.js';
import { routeConfig } from '../config/route.js';
import { checkMcp, MCP_STATIC_AUTH } from '../config/mcp.js';
import { buildRoutes } from '../config/routes.js';
import { buildGuardrails } from '../guardrails/load.js';
import { createSchemaRegistry } from '../config/schemas.js';
import { validateConfig, type ValidatedConfig } from '../config/validate.js';
import { createLiquid, loadFilters, TemplateSet } from '../engine/liquid.js';
import { ConfigError } from '../base/errors.js';
import { runMappingFixtures } from './fixtures.js';
import type { LoadedConfig } from '../engine/loaded-config.js';

export type { LoadedConfig };

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** The day models' lifecycles are judged at (Unix milliseconds); Date.now() by default. */
  now?: number;
}

/** The compile stage: every mapping a protocol file holds, then every fixture under protocols/tests/ rendered against them. */
function compileMappings(templates: TemplateSet, valid: ValidatedConfig, protocols: LoadedConfig['protocols'], rejected: Set<string>, problems: Problems, warnings: string[]): void {
  for (const { source, mappings } of valid.protocols) {
    for (const { pointer, tree, roots } of mappings) templates.collect(pointer, tree, roots);
    problems.list.push(...templates.compilePending(source.file));
  }
  const fixtureDirs = [valid.sources.protocolsDir, ...(valid.sources.overlayDir ? [join(valid.sources.overlayDir, 'channels', 'protocols')] : [])];
  for (const dir of fixtureDirs) problems.list.push(...runMappingFixtures({ templates }, protocols, join(dir, 'tests'), rejected));
  warnings.push(...templates.unrendered());
}

export async function loadConfig(file: string, options: LoadOptions = {}): Promise<LoadedConfig> {
  const problems = new Problems();
  const warnings: string[] = [];
  const templates = new TemplateSet(createLiquid());
  await loadFilters(templates.liquid);
  const sources = readConfigFiles(file, options.env ?? process.env, problems);
  // The process's environment with the overlay's gateway.env over it, read afresh at each load.
  const env = sources.env;
  templates.verify = env.MAPPING_VERIFY === '1';
  const schemas = createSchemaRegistry(templates, { ownSchemas: sources.schemas.length > 0 });
  const valid = validateConfig(sources, schemas, problems, env, warnings);
  const checked = crossCheckConfig(valid, problems, env);
  checkModelIds(checked, problems, warnings, options.now ?? Date.now());
  compileMappings(templates, valid, checked.protocols, checked.rejected, problems, warnings);
  const routes = routeConfig(checked, env, warnings);
  const mcp = checkMcp(valid, problems, env, warnings);
  // An MCP server's static key goes in as a bearer token unless its credential says otherwise.
  templates.compile(MCP_STATIC_AUTH.value);
  const routeNodes = buildRoutes(valid.routes, routes, problems);
  const guardrails = buildGuardrails({ files: valid.guardrails, routeFiles: valid.routes, routes: routeNodes, models: routes.models, aliases: routes.aliases, env, endpoints: routes.endpoints, holdChars: checked.gateway?.guardrails.streamHoldChars ?? 256 }, problems);

  if (problems.list.length || !checked.gateway) throw new ConfigError(problems.list);
  // A scope the catalogue declares can be given to keys once a config declaring it has loaded.
  declareScopes(routes.endpoints.map((e) => e.scope));
  const operatorSchemas = new Map(sources.schemas.flatMap(({ value }) => (typeof (value as { $id?: unknown })?.$id === 'string' ? [[(value as { $id: string }).$id, JSON.stringify(value)] as const] : [])));
  const config: LoadedConfig = { file, baseDir: sources.baseDir, gateway: checked.gateway, protocols: checked.protocols, ...routes, routes: routeNodes, mcp, templates, schemas, warnings, operatorSchemas, ...(guardrails ? { guardrails } : {}) };
  Object.defineProperty(config, 'environment', { value: options.env ?? process.env, enumerable: false });
  return deepFreeze(config, new Set<unknown>([templates, schemas, guardrails]));
}
