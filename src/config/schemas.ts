// Loads every JSON Schema under schemas/ into one strict Ajv, with a `liquid` keyword that compiles text templates while validating
// and a `mapping` keyword that hands structural mappings (with the names in their scope) to the compiler.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { TemplateSet } from '../engine/liquid.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export const schemasDir = join(import.meta.dirname, '..', '..', 'schemas');

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : entry.name.endsWith('.json') ? [join(dir, entry.name)] : [],
  );
}

export interface SchemaRegistry {
  ajv: Ajv;
  validator(id: string): ValidateFunction;
  /** Ids of the config section schemas (schemas/config/*.json). */
  configSections: string[];
}

/**
 * One Ajv for config and request bodies. `templates` receives every string marked `liquid: true`;
 * a template that fails to parse (syntax, unknown filter) is a validation error at its own position.
 * A node marked `mapping: [scope names]` is collected, to be compiled with positions once its file has validated.
 */
export function createSchemaRegistry(templates: TemplateSet): SchemaRegistry {
  const ajv = new Ajv({ strict: true, allErrors: true, useDefaults: true, allowUnionTypes: true });
  addFormats(ajv);
  ajv.addKeyword({
    keyword: 'liquid',
    type: 'string',
    schemaType: 'boolean',
    errors: true,
    validate: function validateLiquid(this: unknown, enabled: boolean, data: string) {
      if (!enabled) return true;
      try {
        templates.compile(data);
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
  ajv.addKeyword({
    keyword: 'mapping',
    schemaType: 'array',
    metaSchema: { type: 'array', items: { type: 'string' } },
    errors: false,
    validate: (roots: string[], data: unknown, _parent?: unknown, cxt?: { instancePath: string }) => {
      templates.collect(cxt?.instancePath ?? '', data, roots);
      return true;
    },
  });
  const configSections: string[] = [];
  for (const file of walk(schemasDir).sort()) {
    const schema = JSON.parse(readFileSync(file, 'utf8')) as { $id?: string };
    if (!schema.$id) throw new Error(`${relative(process.cwd(), file)}: schema has no $id`);
    ajv.addSchema(schema);
    if (schema.$id.startsWith('config/')) configSections.push(schema.$id);
  }
  ajv.addSchema({
    $id: 'config',
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(configSections.map((id) => [id.slice('config/'.length), { $ref: id }])),
  });
  return {
    ajv,
    configSections,
    validator(id) {
      const fn = ajv.getSchema(id);
      if (!fn) throw new Error(`no schema with $id "${id}"`);
      return fn;
    },
  };
}

/** Renders an Ajv error as `/pointer message`, pointing at an offending extra property where there is one. */
export function describeAjvError(error: ErrorObject): { pointer: string; key?: string; message: string } {
  const pointer = error.instancePath;
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(error.params.additionalProperty);
      return { pointer: `${pointer}/${key}`, key, message: `unknown field "${key}"` };
    }
    case 'required':
      return { pointer, message: `missing required field "${error.params.missingProperty}"` };
    case 'enum':
      return { pointer, message: `must be one of ${(error.params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}` };
    default:
      return { pointer, message: error.message ?? 'is invalid' };
  }
}
