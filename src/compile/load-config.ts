// The one config loader, five stages: read -> validate -> cross-check (src/config) -> compile (mappings and their fixtures,
// here) -> route (src/config); then the config is frozen. check-config, startup and reload all run exactly this.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
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
import { sharedLiquid, TemplateSet } from '../engine/liquid.js';
import { ConfigError } from '../base/errors.js';
import { fixtureFileNames, runMappingFixtures } from './fixtures.js';
import type { LoadedConfig } from '../engine/loaded-config.js';

export type { LoadedConfig };

export interface LoadOptions {
  env?: NodeJS.ProcessEnv;
  /** The day models' lifecycles are judged at (Unix milliseconds); Date.now() by default. */
  now?: number;
}

/**
 * Fixture runs that passed whole (no failure, every mapping rendered), by what they depend on: the protocols as validated
 * (their files' places aside), the fixtures' texts, the protocols refused and whether leaves are verified. A load that
 * finds its inputs here need not render every fixture again: a reload with the protocols unchanged, or each test gateway
 * of a process (the fixtures were most of a load's time). A run with any failure is never kept, so every problem is
 * still found and located by a run of its own. Bounded: the newest few are kept.
 */
const passedFixtureRuns: string[] = [];
const PASSED_FIXTURE_RUNS_KEPT = 8;

function fixtureRunKey(templates: TemplateSet, protocols: LoadedConfig['protocols'], fixtureDirs: string[], rejected: ReadonlySet<string>): string {
  const hash = createHash('sha256');
  hash.update(`verify ${templates.verify}\nrejected ${JSON.stringify([...rejected].sort())}\n`);
  for (const id of [...protocols.keys()].sort()) hash.update(JSON.stringify({ ...protocols.get(id), file: undefined })).update('\n');
  // The fixtures by their texts: reading them is enough, parsing them is what a run would do.
  for (const dir of fixtureDirs) for (const file of fixtureFileNames(dir)) hash.update(`${file}\n${readFileSync(join(dir, file), 'utf8')}\n`);
  return hash.digest('hex');
}

/** The compile stage: every mapping a protocol file holds, then every fixture under protocols/tests/ rendered against them. */
function compileMappings(templates: TemplateSet, valid: ValidatedConfig, protocols: LoadedConfig['protocols'], rejected: Set<string>, problems: Problems, warnings: string[]): void {
  const before = problems.list.length;
  for (const { source, mappings } of valid.protocols) {
    for (const { pointer, tree, roots } of mappings) templates.collect(pointer, tree, roots);
    problems.list.push(...templates.compilePending(source.file));
  }
  const fixtureDirs = [valid.sources.protocolsDir, ...(valid.sources.overlayDir ? [join(valid.sources.overlayDir, 'channels', 'protocols')] : [])].map((dir) => join(dir, 'tests'));
  const key = problems.list.length === before ? fixtureRunKey(templates, protocols, fixtureDirs, rejected) : undefined;
  if (key && passedFixtureRuns.includes(key)) return;
  const failures = fixtureDirs.flatMap((dir) => runMappingFixtures({ templates }, protocols, dir, rejected));
  const unrendered = templates.unrendered();
  problems.list.push(...failures);
  warnings.push(...unrendered);
  if (!key || failures.length || unrendered.length || templates.verification.mismatches.length) return;
  passedFixtureRuns.push(key);
  if (passedFixtureRuns.length > PASSED_FIXTURE_RUNS_KEPT) passedFixtureRuns.shift();
}

export async function loadConfig(file: string, options: LoadOptions = {}): Promise<LoadedConfig> {
  const problems = new Problems();
  const warnings: string[] = [];
  const templates = new TemplateSet(await sharedLiquid());
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
