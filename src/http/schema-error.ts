// A request body that breaks its JSON Schema, as a 400 naming where, echoing at most a short prefix of any client key.
import type { ErrorObject } from 'ajv';
import { ValidationError, clientValue } from '../base/errors.js';

/** The first schema violation as a 400 that names where it is. */
export function schemaError(first: ErrorObject): ValidationError {
  const where = first.instancePath || '/';
  const detail =
    first.keyword === 'required'
      ? `missing required field ${clientValue(first.params.missingProperty)}`
      : first.keyword === 'additionalProperties'
        ? `unknown field ${clientValue(first.params.additionalProperty)}`
        : first.message;
  const param = where === '/' ? String(first.params.missingProperty ?? '') || null : where.slice(1).replace(/\//g, '.');
  return new ValidationError(`invalid request body at ${clientValue(where, 128).slice(1, -1)}: ${detail}`, param);
}
