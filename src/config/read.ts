// The read stage: the config file and every file it leads to (protocols, channels, the endpoint catalogue), parsed with positions.
import { existsSync, readdirSync } from 'node:fs';
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
  /** Route files (routes.dir): public model ids and the targets that serve them. */
  routes: YamlSource[];
  /** The operator's JSON Schemas (endpoints.schemasDir), each file's path and parsed value, or why it could not be read. */
  schemas: { file: string; value?: unknown; problem?: string }[];
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

/** Where route files are, as the config file says (./routes beside it by default). */
function routesFolder(root: YamlSource, baseDir: string, env: NodeJS.ProcessEnv): string {
  const section = interpolateValue((root.value as { routes?: unknown } | undefined)?.routes, env) as { dir?: unknown } | undefined;
  return resolve(baseDir, typeof section?.dir === 'string' ? section.dir : './routes');
}

/** The operator's extra catalogue and schema folders (endpoints.catalogueDir, endpoints.schemasDir), when the config names them. */
function operatorFolders(root: YamlSource, baseDir: string, env: NodeJS.ProcessEnv): { catalogueDir?: string; schemasDir?: string } {
  const section = interpolateValue((root.value as { endpoints?: unknown } | undefined)?.endpoints, env) as { catalogueDir?: unknown; schemasDir?: unknown } | undefined;
  return {
    catalogueDir: typeof section?.catalogueDir === 'string' ? resolve(baseDir, section.catalogueDir) : undefined,
    schemasDir: typeof section?.schemasDir === 'string' ? resolve(baseDir, section.schemasDir) : undefined,
  };
}

/** The endpoint catalogue's files: the shipped ones, then the operator's (endpoints.catalogueDir). */
function catalogueFiles(operator: { catalogueDir?: string }): string[] {
  return [...yamlFiles(catalogueDir), ...(operator.catalogueDir ? yamlFiles(operator.catalogueDir) : [])];
}

/**
 * The scopes the config's endpoint catalogue declares, read without loading channels, protocols or mappings: what the
 * admin CLI needs to give a key a scope. A file that does not parse adds nothing here; check-config names it.
 */
export function catalogueScopes(file: string, env: NodeJS.ProcessEnv): string[] {
  const root = readYamlSource(file);
  const scopes = new Set<string>();
  for (const path of catalogueFiles(operatorFolders(root, dirname(file), env))) {
    const { value } = readYamlSource(path);
    for (const entry of Array.isArray(value) ? value : [value]) {
      const scope = (entry as { scope?: unknown } | null)?.scope;
      if (typeof scope === 'string') scopes.add(scope);
    }
  }
  return [...scopes];
}

export function readConfigFiles(file: string, env: NodeJS.ProcessEnv, problems: Problems): ConfigSources {
  if (!existsSync(file)) throw new ConfigError([`${displayPath(file)}:1:1 / config file not found`]);
  const baseDir = dirname(file);
  const root = read(file, problems);
  const { channelsDir, protocolsDir } = folders(root, baseDir, env);
  const operator = operatorFolders(root, baseDir, env);
  return {
    file,
    baseDir,
    root,
    protocolsDir,
    protocols: yamlFiles(protocolsDir).map((path) => read(path, problems)),
    channels: yamlFiles(channelsDir).map((path) => read(path, problems)),
    catalogue: catalogueFiles(operator).map((path) => read(path, problems)),
    routes: yamlFiles(routesFolder(root, baseDir, env)).map((path) => read(path, problems)),
    schemas: operator.schemasDir ? yamlFiles(operator.schemasDir, /\.json$/).map(readJsonFile) : [],
  };
}
