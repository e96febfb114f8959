// The read stage: the config file and every file it leads to (protocols, channels, the endpoint catalogue), parsed with positions.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { dirname, join, resolve } from 'node:path';
import { ConfigError } from '../base/errors.js';
import { interpolateValue } from './env.js';
import { readJsonFile } from './json-source.js';
import type { Problems } from './problems.js';
import { displayPath, readYamlSource, type YamlSource } from './yaml-source.js';

/** The shipped endpoint catalogue: YAML at the top of the project (one level above src/ and dist/ alike). */
const catalogueDir = join(import.meta.dirname, '..', '..', 'catalogue');

export interface ConfigSources {
  file: string;
  /** Folder the config file lives in; relative paths in it resolve from here. */
  baseDir: string;
  root: YamlSource;
  protocolsDir: string;
  protocols: YamlSource[];
  channels: YamlSource[];
  catalogue: YamlSource[];
  /** The MCP server files (mcp.dir, default ./mcp beside the config file, then the overlay's mcp/). */
  mcp: YamlSource[];
  /** Route files (routes.dir, then the overlay's routes/): public model ids and the targets that serve them. */
  routes: YamlSource[];
  /** Guardrail files (guardrails.dir, then the overlay's guardrails/): named checks on what goes in and comes out. */
  guardrails: YamlSource[];
  /** The operator's JSON Schemas (endpoints.schemasDir, the overlay's schemas/requests/), each file's path and parsed value, or why it could not be read. */
  schemas: { file: string; value?: unknown; problem?: string }[];
  /** The operator's overlay folder (GATEWAY_OVERLAY_DIR, else overlay.dir), when there is one. */
  overlayDir?: string;
  /** The environment this load reads `${VAR}` and credentials from: the process's, with the overlay's gateway.env over it. */
  env: NodeJS.ProcessEnv;
}

function yamlFiles(dir: string, pattern = /\.ya?ml$/): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => pattern.test(f))
    .sort()
    .map((f) => join(dir, f));
}

/** Reads one file; its syntax errors are problems, and its value is then absent. */
function read(file: string, problems: Problems): YamlSource {
  const source = readYamlSource(file);
  problems.list.push(...source.syntaxErrors);
  return source;
}

/** Where channel and protocol files are, as the config file says (the validate stage checks what it says). */
function folders(root: YamlSource, baseDir: string, env: NodeJS.ProcessEnv): { channelsDir: string; protocolsDir: string } {
  const section = interpolateValue((root.value as { channels?: unknown } | undefined)?.channels, env) as { dir?: unknown; protocolsDir?: unknown } | undefined;
  const channelsDir = resolve(baseDir, typeof section?.dir === 'string' ? section.dir : './channels');
  const protocolsDir = resolve(baseDir, typeof section?.protocolsDir === 'string' ? section.protocolsDir : join(channelsDir, 'protocols'));
  return { channelsDir, protocolsDir };
}

/** Where a section's files are, as the config file says (`<section>.dir`; ./<section> beside it by default). */
function sectionFolder(root: YamlSource, baseDir: string, env: NodeJS.ProcessEnv, name: 'routes' | 'guardrails'): string {
  const section = interpolateValue((root.value as Record<string, unknown> | undefined)?.[name], env) as { dir?: unknown } | undefined;
  return resolve(baseDir, typeof section?.dir === 'string' ? section.dir : `./${name}`);
}

/** The operator's extra catalogue and schema folders (endpoints.catalogueDir, endpoints.schemasDir), when the config names them. */
function operatorFolders(root: YamlSource, baseDir: string, env: NodeJS.ProcessEnv): { catalogueDir?: string; schemasDir?: string } {
  const section = interpolateValue((root.value as { endpoints?: unknown } | undefined)?.endpoints, env) as { catalogueDir?: unknown; schemasDir?: unknown } | undefined;
  return {
    catalogueDir: typeof section?.catalogueDir === 'string' ? resolve(baseDir, section.catalogueDir) : undefined,
    schemasDir: typeof section?.schemasDir === 'string' ? resolve(baseDir, section.schemasDir) : undefined,
  };
}

/** Where the MCP server files are (mcp.dir). */
function mcpFolder(root: YamlSource, baseDir: string, env: NodeJS.ProcessEnv): string {
  const section = interpolateValue((root.value as { mcp?: unknown } | undefined)?.mcp, env) as { dir?: unknown } | undefined;
  return resolve(baseDir, typeof section?.dir === 'string' ? section.dir : './mcp');
}

/** The overlay folder: GATEWAY_OVERLAY_DIR (the container sets /overlay), else the config's overlay.dir; a relative path from the config's folder. */
function overlayFolder(root: YamlSource, baseDir: string, env: NodeJS.ProcessEnv): string | undefined {
  const section = interpolateValue((root.value as { overlay?: unknown } | undefined)?.overlay, env) as { dir?: unknown } | undefined;
  const dir = env.GATEWAY_OVERLAY_DIR || (typeof section?.dir === 'string' && section.dir ? section.dir : undefined);
  return dir ? resolve(baseDir, dir) : undefined;
}

/** The overlay's gateway.env (KEY=value lines) over the process's environment: re-read at every load, so a reload sees a secret added since. */
function withEnvFile(env: NodeJS.ProcessEnv, overlayDir: string | undefined, problems: Problems): NodeJS.ProcessEnv {
  const file = overlayDir && join(overlayDir, ENV_FILE);
  if (!file || !existsSync(file)) return env;
  try {
    return { ...env, ...parseEnv(readFileSync(file, 'utf8')) };
  } catch (err) {
    problems.list.push(`${displayPath(file)}:1:1 / cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    return env;
  }
}

/** The env file in the overlay folder (docs/endpoints.md, "Your own files in an overlay folder"). */
export const ENV_FILE = 'gateway.env';

/** The endpoint catalogue's files: the shipped ones, then the operator's (endpoints.catalogueDir), then the overlay's catalogue/. */
function catalogueFiles(operator: { catalogueDir?: string }, overlayDir: string | undefined): string[] {
  return [...yamlFiles(catalogueDir), ...(operator.catalogueDir ? yamlFiles(operator.catalogueDir) : []), ...(overlayDir ? yamlFiles(join(overlayDir, 'catalogue')) : [])];
}

/**
 * The scopes the config's endpoint catalogue declares, read without loading channels, protocols or mappings: what the
 * admin CLI needs to give a key a scope. A file that does not parse adds nothing here; check-config names it.
 */
/** The endpoint catalogue's entries as its files hold them (no checks): for a command that needs a field or two of them. */
function catalogueEntries(file: string, env: NodeJS.ProcessEnv): unknown[] {
  const root = readYamlSource(file);
  return catalogueFiles(operatorFolders(root, dirname(file), env), overlayFolder(root, dirname(file), env)).flatMap((path) => {
    const { value } = readYamlSource(path);
    return Array.isArray(value) ? value : [value];
  });
}

export function catalogueScopes(file: string, env: NodeJS.ProcessEnv): string[] {
  const scopes = catalogueEntries(file, env).map((entry) => (entry as { scope?: unknown } | null)?.scope);
  return [...new Set(scopes.filter((scope): scope is string => typeof scope === 'string'))];
}

/** The wire objects of the catalogue's task families (`pipeline.task.object` of a `flow: task` entry), from its files. */
export function catalogueTaskObjects(file: string, env: NodeJS.ProcessEnv): string[] {
  const objects = catalogueEntries(file, env).map((entry) => {
    const pipeline = (entry as { pipeline?: { flow?: unknown; task?: { object?: unknown } } } | null)?.pipeline;
    return pipeline?.flow === 'task' ? pipeline.task?.object : undefined;
  });
  return [...new Set(objects.filter((object): object is string => typeof object === 'string'))];
}

export function readConfigFiles(file: string, processEnv: NodeJS.ProcessEnv, problems: Problems): ConfigSources {
  if (!existsSync(file)) throw new ConfigError([`${displayPath(file)}:1:1 / config file not found`]);
  const baseDir = dirname(file);
  const root = read(file, problems);
  const overlayDir = overlayFolder(root, baseDir, processEnv);
  const env = withEnvFile(processEnv, overlayDir, problems);
  const { channelsDir, protocolsDir } = folders(root, baseDir, env);
  const operator = operatorFolders(root, baseDir, env);
  // The overlay's folders come after the shipped ones (and the operator's named folders), in the same shapes.
  const overlay = (path: string, pattern?: RegExp) => (overlayDir ? yamlFiles(join(overlayDir, path), pattern) : []);
  return {
    file,
    baseDir,
    root,
    protocolsDir,
    protocols: [...yamlFiles(protocolsDir), ...overlay('channels/protocols')].map((path) => read(path, problems)),
    channels: [...yamlFiles(channelsDir), ...overlay('channels')].map((path) => read(path, problems)),
    catalogue: catalogueFiles(operator, overlayDir).map((path) => read(path, problems)),
    mcp: [...yamlFiles(mcpFolder(root, baseDir, env)), ...overlay('mcp')].map((path) => read(path, problems)),
    routes: [...yamlFiles(sectionFolder(root, baseDir, env, 'routes')), ...overlay('routes')].map((path) => read(path, problems)),
    guardrails: [...yamlFiles(sectionFolder(root, baseDir, env, 'guardrails')), ...overlay('guardrails')].map((path) => read(path, problems)),
    schemas: [...(operator.schemasDir ? yamlFiles(operator.schemasDir, /\.json$/) : []), ...overlay('schemas/requests', /\.json$/)].map(readJsonFile),
    overlayDir,
    env,
  };
}
