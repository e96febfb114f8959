// Loads every JSON Schema under schemas/ into one strict Ajv, with a `liquid` keyword that has text templates parsed while validating,
// a `path` keyword for Liquid paths (`"{{ answer.usage }}"`, src/config/paths.ts) and a `mapping` keyword that collects
// structural mappings (with the names in their scope) for the compile stage.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { closest, distance } from 'fastest-levenshtein';
import { ConfigError } from '../base/errors.js';
import { readJsonFile } from './json-source.js';
import { parsePath } from './paths.js';
import { displayPath } from './yaml-source.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export const schemasDir = join(import.meta.dirname, '..', '..', 'schemas');

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.json') ? [join(dir, entry.name)] : [],
  );
}

/** A node a schema marks `mapping: [scope names]`, found while validating: compiled, with positions, by the layer above config. */
export interface CollectedMapping {
  pointer: string;
  tree: unknown;
  roots: string[];
}

/** What the layer above config lends the validator: parsing a text template (throwing what is wrong with it). */
export interface TextTemplates {
  compile(source: string): unknown;
}

export interface SchemaRegistry {
  ajv: Ajv;
  validator(id: string): ValidateFunction;
  /** Ids of the config section schemas (schemas/config/*.json). */
  configSections: string[];
  /** The mappings collected since the last call (one file's, when called after each file validates). */
  takeMappings(): CollectedMapping[];
}

/** What the keywords report to while one registry's validator runs: its load's templates and its mapping collector. */
interface KeywordContext {
  templates: TextTemplates;
  collect(mapping: CollectedMapping): void;
}

/** Set for the span of one (synchronous) validation; the keywords below report to it. */
let current: KeywordContext | undefined;

/** Adds the `liquid` keyword: a string marked `liquid: true` must parse as a text template, else it is an error at its position. */
function addLiquidKeyword(ajv: Ajv): void {
  ajv.addKeyword({
    keyword: 'liquid',
    type: 'string',
    schemaType: 'boolean',
    errors: true,
    validate: function validateLiquid(this: unknown, enabled: boolean, data: string) {
      if (!enabled || !current) return true;
      try {
        current.templates.compile(data);
        return true;
      } catch (err) {
        const message = (err as Error).message.split('\n')[0].replace(/, line:\d+, col:\d+$/, '');
        (validateLiquid as unknown as { errors: Partial<ErrorObject>[] }).errors = [
          { keyword: 'liquid', message: `Liquid template: ${message}`, params: {} },
        ];
        return false;
      }
    },
  });
}

/** Adds the `path` keyword: a string must be a Liquid path from the named root (src/config/paths.ts). */
function addPathKeyword(ajv: Ajv): void {
  ajv.addKeyword({
    keyword: 'path',
    type: 'string',
    schemaType: 'string',
    errors: true,
    validate: function validatePath(root: string, data: string) {
      const parsed = parsePath(data, root);
      if (!('problem' in parsed)) return true;
      (validatePath as unknown as { errors: Partial<ErrorObject>[] }).errors = [{ keyword: 'path', message: parsed.problem, params: {} }];
      return false;
    },
  });
}

/** Adds the `mapping` keyword: each node marked `mapping: [scope names]` is handed to the current collector, never an error. */
function addMappingKeyword(ajv: Ajv): void {
  ajv.addKeyword({
    keyword: 'mapping',
    schemaType: 'array',
    metaSchema: { type: 'array', items: { type: 'string' } },
    errors: false,
    validate: (roots: string[], data: unknown, _parent?: unknown, cxt?: { instancePath: string }) => {
      current?.collect({ pointer: cxt?.instancePath ?? '', tree: data, roots });
      return true;
    },
  });
}

/** Adds every schema under schemas/ and the `config` schema made of the config sections; returns those sections' ids. */
function addSchemas(ajv: Ajv): string[] {
  const configSections: string[] = [];
  const read = walk(schemasDir).sort().map(readJsonFile);
  const broken = read.flatMap(({ problem }) => (problem ? [problem] : []));
  if (broken.length) throw new ConfigError(broken);
  for (const { file, value } of read) {
    const schema = value as { $id?: string };
    if (!schema.$id) throw new ConfigError([`${displayPath(file)}:1:1 / the schema has no "$id"`]);
    ajv.addSchema(schema);
    if (schema.$id.startsWith('config/')) configSections.push(schema.$id);
  }
  ajv.addSchema({
    $id: 'config',
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(configSections.map((id) => [id.slice('config/'.length), { $ref: id }])),
  });
  return configSections;
}

/** A strict Ajv with the gateway's keywords and every schema under schemas/. */
function newAjv(): { ajv: Ajv; configSections: string[] } {
  // verbose: an error carries the schema it failed (an unknown field's siblings, for a "did you mean").
  const ajv = new Ajv({ strict: true, allErrors: true, useDefaults: true, allowUnionTypes: true, verbose: true });
  addFormats(ajv);
  addLiquidKeyword(ajv);
  addPathKeyword(ajv);
  addMappingKeyword(ajv);
  return { ajv, configSections: addSchemas(ajv) };
}

/**
 * The one Ajv of this process for loads that add no schema of their own: schemas/ is code, the same for every load, and
 * compiling its validators costs most of a config load (each is compiled on first use, then kept). What differs between
 * loads (the templates, the collected mappings) reaches the keywords through `current`.
 */
let shared: { ajv: Ajv; configSections: string[] } | undefined;
function sharedAjv(): { ajv: Ajv; configSections: string[] } {
  return (shared ??= newAjv());
}

/** Runs `validate` with `context` current; its errors are kept on the returned function, where callers read them. */
function validatorIn(context: KeywordContext, validate: ValidateFunction): ValidateFunction {
  const bound = ((data: unknown) => {
    const outer = current;
    current = context;
    try {
      return validate(data);
    } finally {
      current = outer;
      bound.errors = validate.errors;
    }
  }) as ValidateFunction;
  return bound;
}

/**
 * One Ajv for config and request bodies. `templates` receives every string marked `liquid: true`;
 * a template that fails to parse (syntax, unknown filter) is a validation error at its own position.
 * A node marked `mapping: [scope names]` is collected, to be compiled with positions once its file has validated.
 */
export function createSchemaRegistry(templates: TextTemplates, options: { ownSchemas?: boolean } = {}): SchemaRegistry {
  let collected: CollectedMapping[] = [];
  const context: KeywordContext = { templates, collect: (mapping) => collected.push(mapping) };
  // A load that adds the operator's schemas (endpoints.schemasDir) gets an Ajv of its own: they must not outlive it.
  const { ajv, configSections } = options.ownSchemas ? newAjv() : sharedAjv();
  const validators = new Map<string, ValidateFunction>();
  return {
    ajv,
    configSections,
    takeMappings() {
      const taken = collected;
      collected = [];
      return taken;
    },
    validator(id) {
      let bound = validators.get(id);
      if (!bound) {
        const fn = ajv.getSchema(id);
        if (!fn) throw new Error(`no schema with $id "${id}"`);
        validators.set(id, (bound = validatorIn(context, fn)));
      }
      return bound;
    },
  };
}

/** The known name `name` is most likely a misspelling of: the nearest by edit distance, ignoring case, if near enough. */
export function nearestName(name: string, known: readonly string[]): string | undefined {
  if (!known.length) return undefined;
  const lower = name.toLowerCase();
  const near = closest(lower, known.map((k) => k.toLowerCase()));
  // A third of the name's letters may be wrong (at least one, at most three): "baseURL", "baseUlr", "modles".
  const allowed = Math.min(3, Math.max(1, Math.floor(name.length / 3)));
  return distance(lower, near) <= allowed ? known.find((k) => k.toLowerCase() === near) : undefined;
}

/** Renders an Ajv error as `/pointer message`, pointing at an offending extra property where there is one. */
export function describeAjvError(error: ErrorObject): { pointer: string; key?: string; message: string } {
  const pointer = error.instancePath;
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(error.params.additionalProperty);
      const near = nearestName(key, Object.keys((error.parentSchema as { properties?: object } | undefined)?.properties ?? {}));
      return { pointer: `${pointer}/${key}`, key, message: `unknown field "${key}"${near ? ` (did you mean "${near}"?)` : ''}` };
    }
    case 'required':
      return { pointer, message: `missing required field "${error.params.missingProperty}"` };
    case 'enum':
      return { pointer, message: `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
    default:
      return { pointer, message: error.message ?? 'is invalid' };
  }
}
