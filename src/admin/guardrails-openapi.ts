// The guardrails workspaces and keys add, in the admin API's OpenAPI document: the body that sets them, the paths.
import { body, errors, json, pathId } from './openapi-parts.js';

export const setGuardrails = {
  type: 'object',
  required: ['guardrails'],
  additionalProperties: false,
  properties: {
    guardrails: { type: 'array', maxItems: 32, items: { type: 'string', minLength: 1, maxLength: 64 }, description: 'Ids of guardrails the config offers (`offered: true`); an empty list adds none.' },
  },
} as const;

const view = { type: 'object', required: ['guardrails'], additionalProperties: false, properties: { guardrails: { type: 'array', items: { type: 'string' } } } };

function guardrails(pathParam: string, subject: 'key' | 'workspace') {
  const Subject = subject === 'key' ? 'Key' : 'Workspace';
  return {
    parameters: [pathId(pathParam)],
    get: { operationId: `get${Subject}Guardrails`, summary: `The guardrails the ${subject} adds to the operator's (docs/guardrails.md)`, responses: { 200: json(view), ...errors(401, 403, 404) } },
    put: {
      operationId: `set${Subject}Guardrails`,
      summary: `Set the guardrails the ${subject} adds: only ids the config offers; the operator's own stay whatever this says. Audited as ${subject}.guardrails.`,
      requestBody: body(setGuardrails),
      responses: { 200: json(view), ...errors(400, 401, 403, 404) },
    },
  };
}

export const guardrailPaths = {
  '/workspaces/{workspace_id}/guardrails': guardrails('workspace_id', 'workspace'),
  '/keys/{key_id}/guardrails': guardrails('key_id', 'key'),
};
