// How workspaces and keys narrow the response cache, in the admin API's OpenAPI document: the body that sets it, the paths.
import { body, errors, json, pathId } from './openapi-parts.js';

const fields = {
  enabled: { type: 'boolean', default: true, description: 'false: no request of this workspace or key is answered from the cache or stored in it (`x-cache: bypass`). true: the cache works as the route says, within the other fields.' },
  ttlSeconds: { type: ['integer', 'null'], minimum: 1, maximum: 2592000, description: "The longest an answer this workspace or key stores is kept, and the oldest one it is served: the shorter of this and the route's. null: the route's." },
  families: {
    type: ['array', 'null'],
    maxItems: 32,
    uniqueItems: true,
    items: { type: 'string', minLength: 1, maxLength: 64 },
    description: "Only these endpoint families are cached (the catalogue's pipeline operations: chat, responses, messages, embeddings, moderations, rerank, ...); a request of another family is a bypass. null: every family the route caches.",
  },
  maxEntryBytes: { type: ['integer', 'null'], minimum: 1, maximum: 1073741824, description: 'The largest answer this workspace or key stores (bytes): the smaller of this and config.yaml cache.maxEntryBytes. null: that.' },
} as const;

export const setCacheSettings = { type: 'object', additionalProperties: false, properties: fields } as const;

const view = { type: 'object', required: ['enabled', 'ttlSeconds', 'families', 'maxEntryBytes'], additionalProperties: false, properties: fields };

function cacheSettings(pathParam: string, subject: 'key' | 'workspace') {
  const Subject = subject === 'key' ? 'Key' : 'Workspace';
  const within = subject === 'key' ? "within its workspace's and the route's" : "within the route's";
  return {
    parameters: [pathId(pathParam)],
    get: { operationId: `get${Subject}Cache`, summary: `How the ${subject} narrows the response cache (docs/caching.md)`, responses: { 200: json(view), ...errors(401, 403, 404) } },
    put: {
      operationId: `set${Subject}Cache`,
      summary: `Set how the ${subject} narrows the response cache, ${within}: off, a shorter life, fewer families, smaller entries; never wider. Fields left out are not narrowed. Audited as ${subject}.cache.`,
      requestBody: body(setCacheSettings),
      responses: { 200: json(view), ...errors(400, 401, 403, 404) },
    },
  };
}

export const cacheSettingsPaths = {
  '/workspaces/{workspace_id}/cache': cacheSettings('workspace_id', 'workspace'),
  '/keys/{key_id}/cache': cacheSettings('key_id', 'key'),
};
