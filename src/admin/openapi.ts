// The admin API's OpenAPI 3.1 document, served at /admin/v1/openapi.json. Request bodies and query strings are checked
// against the very schemas it publishes (see routes.ts), so the document and the routes cannot drift apart.
import { body, errors, id, json, list, pathId, queryParams, ref } from './openapi-parts.js';
import { webhookPaths, webhookSchemas } from './webhooks-openapi.js';
import { requestLogPaths, requestLogSchemas, requestsQuery } from './request-logs-openapi.js';
import { mcpGrantPaths, mcpGrantSchemas, setMcpGrant } from './mcp-grants-openapi.js';
import { guardrailPaths, setGuardrails } from './guardrails-openapi.js';
import { cacheSettingsPaths, setCacheSettings } from './cache-settings-openapi.js';

const money = { type: ['number', 'null'], minimum: 0, maximum: 1_000_000, description: 'USD; null for none.' } as const;
const unix = { type: ['integer', 'null'], description: 'Unix seconds; null for never.' } as const;
const period = { enum: ['total', 'daily', 'weekly', 'monthly'], description: 'What the cap counts over: total (never resets) or the day, week (from Monday) or month of billing.timeZone.' } as const;

/** Request schemas, by operation id: the routes validate with these. */
export const requestSchemas = {
  createWorkspace: {
    type: 'object',
    required: ['name'],
    additionalProperties: false,
    properties: { name: { type: 'string', minLength: 1, maxLength: 64 }, spend_cap: money, spend_cap_period: period },
  },
  updateWorkspace: { type: 'object', additionalProperties: false, properties: { spend_cap: money, spend_cap_period: period } },
  createKey: {
    type: 'object',
    additionalProperties: false,
    properties: {
      name: { type: ['string', 'null'], maxLength: 100 },
      scopes: { type: 'array', maxItems: 16, items: { type: 'string', maxLength: 64 }, description: 'Empty or absent: every scope.' },
      expires_at: unix,
      spend_cap: money,
      spend_cap_period: period,
    },
  },
  updateKey: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      name: { type: ['string', 'null'], maxLength: 100 },
      scopes: { type: 'array', maxItems: 16, items: { type: 'string', maxLength: 64 } },
      expires_at: unix,
      spend_cap: money,
      spend_cap_period: period,
    },
  },
  setMember: { type: 'object', required: ['email', 'role'], additionalProperties: false, properties: { email: { type: 'string', maxLength: 254 }, role: { enum: ['owner', 'admin', 'member'] } } },
  setModelCap: {
    type: 'object',
    required: ['model', 'spend_cap'],
    additionalProperties: false,
    properties: {
      model: { type: 'string', minLength: 1, maxLength: 128, description: 'A model id as clients name it; setting a cap needs a model the gateway serves.' },
      spend_cap: { ...money, description: 'USD; null removes the cap on this model.' },
      spend_cap_period: { ...period, description: `${period.description} Absent: total for a new cap, unchanged for an existing one.` },
    },
  },
  usageQuery: {
    type: 'object',
    additionalProperties: false,
    properties: { since: { type: 'string', maxLength: 32, description: 'YYYY-MM-DD (UTC), inclusive.' }, until: { type: 'string', maxLength: 32, description: 'YYYY-MM-DD (UTC), exclusive.' } },
  },
  auditQuery: {
    type: 'object',
    additionalProperties: false,
    properties: {
      workspace_id: id,
      before: { type: 'string', maxLength: 64, description: 'The last id of the previous page.' },
      limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
    },
  },
  requestsQuery,
  setMcpGrant,
  setGuardrails,
  setCacheSettings,
} as const;

/** Spend in the cap's current period, beside every cap shown. */
const periodRequired = ['spent_in_period', 'period_resets_at'];
const periodProperties = {
  spent_in_period: { type: 'number', description: "USD spent in the cap's current period (all time for a total cap, or none)." },
  period_resets_at: { type: ['string', 'null'], format: 'date-time', description: 'When the current period ends and the cap resets (ISO 8601, UTC); null for total.' },
};
const keyRequired = ['id', 'workspace_id', 'name', 'prefix', 'scopes', 'expires_at', 'revoked_at', 'spend_cap', 'spend_cap_period', 'spent', ...periodRequired, 'created_at'];
const keyProperties = {
  id: { type: 'string' },
  workspace_id: { type: 'string' },
  name: { type: ['string', 'null'] },
  prefix: { type: 'string', description: "The key's first characters, to recognise it." },
  scopes: { type: 'array', items: { type: 'string' }, description: 'Empty: every scope.' },
  expires_at: unix,
  revoked_at: { type: ['integer', 'null'] },
  spend_cap: money,
  spend_cap_period: period,
  spent: { type: 'number', description: 'USD charged so far.' },
  ...periodProperties,
  created_at: { type: 'integer' },
};

/** A key's or a workspace's caps on single models: list, and set or remove one. */
function modelCaps(pathParam: string, subject: 'key' | 'workspace') {
  const Subject = subject === 'key' ? 'Key' : 'Workspace';
  return {
    parameters: [pathId(pathParam)],
    get: { operationId: `list${Subject}ModelCaps`, summary: `The ${subject}'s caps on single models, with their spend in the current period`, responses: { 200: json(list('ModelCap')), ...errors(401, 403, 404) } },
    put: {
      operationId: `set${Subject}ModelCap`,
      summary: `Set the ${subject}'s cap on one model, beside its cap on all models; spend_cap null removes it. Audited as ${subject}.model_cap.`,
      requestBody: body(requestSchemas.setModelCap),
      responses: { 200: json(ref('ModelCap')), ...errors(400, 401, 403, 404) },
    },
  };
}

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'relay-gateway admin API',
    version: '1',
    description:
      'Workspaces, API keys, caps on single models, users and roles, task webhooks, usage, request logs, the audit log and config reload. Authenticate with an admin token from the config (`Authorization: Bearer <token>`) or the dashboard session of a workspace owner (that session reaches only the workspaces it owns). Workspace API keys are refused. Every change writes one audit row in the same transaction.',
  },
  servers: [{ url: '/admin/v1' }],
  security: [{ adminToken: [] }, { ownerSession: [] }],
  paths: {
    '/workspaces': {
      get: { operationId: 'listWorkspaces', summary: 'List workspaces', responses: { 200: json(list('Workspace')), ...errors(401, 403) } },
      post: {
        operationId: 'createWorkspace',
        summary: 'Create a workspace (admin token only)',
        requestBody: body(requestSchemas.createWorkspace),
        responses: { 201: json(ref('Workspace'), 'Created'), ...errors(400, 401, 403) },
      },
    },
    '/workspaces/{workspace_id}': {
      parameters: [pathId('workspace_id')],
      get: { operationId: 'getWorkspace', summary: 'One workspace', responses: { 200: json(ref('Workspace')), ...errors(401, 403, 404) } },
      patch: {
        operationId: 'updateWorkspace',
        summary: "Change a workspace's spending cap",
        requestBody: body(requestSchemas.updateWorkspace),
        responses: { 200: json(ref('Workspace')), ...errors(400, 401, 403, 404) },
      },
    },
    '/workspaces/{workspace_id}/keys': {
      parameters: [pathId('workspace_id')],
      get: { operationId: 'listKeys', summary: "A workspace's API keys (never the keys themselves)", responses: { 200: json(list('Key')), ...errors(401, 403, 404) } },
      post: {
        operationId: 'createKey',
        summary: 'Create an API key: the answer holds the key, shown this once',
        requestBody: body(requestSchemas.createKey),
        responses: { 201: json(ref('CreatedKey'), 'Created'), ...errors(400, 401, 403, 404) },
      },
    },
    '/keys/{key_id}': {
      parameters: [pathId('key_id')],
      get: { operationId: 'getKey', summary: 'One API key', responses: { 200: json(ref('Key')), ...errors(401, 403, 404) } },
      patch: {
        operationId: 'updateKey',
        summary: "Change a key's spending cap, scopes, expiry or name",
        requestBody: body(requestSchemas.updateKey),
        responses: { 200: json(ref('Key')), ...errors(400, 401, 403, 404) },
      },
      delete: { operationId: 'revokeKey', summary: 'Revoke a key (it stays listed, revoked)', responses: { 200: json(ref('Key')), ...errors(401, 403, 404) } },
    },
    '/workspaces/{workspace_id}/model_caps': modelCaps('workspace_id', 'workspace'),
    '/keys/{key_id}/model_caps': modelCaps('key_id', 'key'),
    '/workspaces/{workspace_id}/users': {
      parameters: [pathId('workspace_id')],
      get: { operationId: 'listMembers', summary: "A workspace's users and their roles", responses: { 200: json(list('Member')), ...errors(401, 403, 404) } },
      put: {
        operationId: 'setMember',
        summary: 'Give a user (created when new) a role in the workspace',
        requestBody: body(requestSchemas.setMember),
        responses: { 200: json(ref('Member')), 201: json(ref('Member'), 'Created'), ...errors(400, 401, 403, 404) },
      },
    },
    '/workspaces/{workspace_id}/users/{user_id}': {
      parameters: [pathId('workspace_id'), pathId('user_id')],
      delete: { operationId: 'removeMember', summary: 'Take a user out of the workspace', responses: { 204: { description: 'Removed' }, ...errors(400, 401, 403, 404) } },
    },
    '/workspaces/{workspace_id}/usage': {
      parameters: [pathId('workspace_id')],
      get: { operationId: 'getUsage', summary: 'Usage by day, model and key', parameters: queryParams(requestSchemas.usageQuery), responses: { 200: json(ref('Usage')), ...errors(400, 401, 403, 404) } },
    },
    ...requestLogPaths,
    ...mcpGrantPaths,
    ...guardrailPaths,
    ...cacheSettingsPaths,
    '/audit': {
      get: { operationId: 'listAudit', summary: 'The audit log, newest first', parameters: queryParams(requestSchemas.auditQuery), responses: { 200: json(ref('AuditPage')), ...errors(400, 401, 403, 404) } },
    },
    '/reload': {
      post: { operationId: 'reloadConfig', summary: 'Check the config file again and swap it in (admin token only)', responses: { 200: json(ref('Reload')), ...errors(400, 401, 403) } },
    },
    ...webhookPaths,
  },
  components: {
    securitySchemes: {
      adminToken: { type: 'http', scheme: 'bearer', description: 'A token whose SHA-256 is listed under admin.tokens in the config.' },
      ownerSession: { type: 'apiKey', in: 'cookie', name: 'gw_dashboard', description: "The dashboard's session cookie of a workspace owner." },
    },
    schemas: {
      Error: {
        type: 'object',
        required: ['error'],
        properties: { error: { type: 'object', required: ['type', 'code', 'message'], properties: { type: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' }, param: { type: ['string', 'null'] } } } },
      },
      Workspace: {
        type: 'object',
        required: ['id', 'name', 'spend_cap', 'spend_cap_period', 'spent', ...periodRequired, 'created_at'],
        additionalProperties: false,
        properties: { id: { type: 'string' }, name: { type: 'string' }, spend_cap: money, spend_cap_period: period, spent: { type: 'number', description: 'USD charged so far.' }, ...periodProperties, created_at: { type: 'integer' } },
      },
      Key: { type: 'object', required: keyRequired, additionalProperties: false, properties: keyProperties },
      CreatedKey: {
        type: 'object',
        required: [...keyRequired, 'key'],
        additionalProperties: false,
        properties: { ...keyProperties, key: { type: 'string', description: 'The key itself: store it now, it is not shown again.' } },
      },
      ModelCap: {
        type: 'object',
        required: ['model', 'spend_cap', 'spend_cap_period', ...periodRequired],
        additionalProperties: false,
        properties: { model: { type: 'string' }, spend_cap: { ...money, description: 'USD; null once removed.' }, spend_cap_period: period, ...periodProperties },
      },
      Member: {
        type: 'object',
        required: ['user_id', 'email', 'role', 'password_set'],
        additionalProperties: false,
        properties: { user_id: { type: 'string' }, email: { type: 'string' }, role: { enum: ['owner', 'admin', 'member'] }, password_set: { type: 'boolean' }, password_link: { type: 'string', description: 'New users only: a one-time link to choose a password.' } },
      },
      Usage: {
        type: 'object',
        required: ['workspace_id', 'data', 'totals'],
        additionalProperties: false,
        properties: {
          workspace_id: { type: 'string' },
          data: {
            type: 'array',
            items: {
              type: 'object',
              required: ['date', 'model', 'key_id', 'requests', 'input_tokens', 'output_tokens', 'cached_input_tokens', 'units', 'cost', 'cache_hits', 'cache_saved'],
              properties: {
                date: { type: 'string' },
                model: { type: 'string' },
                key_id: { type: 'string' },
                requests: { type: 'integer' },
                input_tokens: { type: 'integer' },
                output_tokens: { type: 'integer' },
                cached_input_tokens: { type: 'integer' },
                units: { type: 'number' },
                cost: { type: 'object', required: ['amount', 'currency'], properties: { amount: { type: 'number' }, currency: { type: 'string' } } },
                cache_hits: { type: 'integer', description: 'Requests of the group answered from the response cache (ledger kind cache_hit).' },
                cache_saved: { type: 'number', description: "What those hits saved, in the row's currency: the cost of the answers they replayed less what the hits were charged." },
              },
            },
          },
          totals: { type: 'array', items: { type: 'object' } },
        },
      },
      AuditEntry: {
        type: 'object',
        required: ['id', 'at', 'actor', 'action', 'workspace_id', 'target_id', 'before', 'after', 'address'],
        additionalProperties: false,
        properties: {
          id: { type: 'string' },
          at: { type: 'string', format: 'date-time' },
          actor: { type: 'object', required: ['kind', 'id'], properties: { kind: { enum: ['user', 'admin_token', 'cli', 'gateway'] }, id: { type: 'string' } } },
          action: { type: 'string' },
          workspace_id: { type: ['string', 'null'] },
          target_id: { type: ['string', 'null'] },
          before: { description: 'The record before the change, without secrets; null for a creation.' },
          after: { description: 'The record after the change; null for a removal.' },
          address: { type: ['string', 'null'] },
        },
      },
      AuditPage: { type: 'object', required: ['data', 'has_more'], additionalProperties: false, properties: { data: { type: 'array', items: ref('AuditEntry') }, has_more: { type: 'boolean' } } },
      ...requestLogSchemas,
      ...mcpGrantSchemas,
      Reload: {
        type: 'object',
        required: ['reloaded', 'changes', 'restart_needed', 'channels_disabled', 'summary', 'workers', 'workers_total'],
        additionalProperties: false,
        properties: {
          reloaded: { type: 'boolean', description: 'The config was checked and swapped in (`changes` says what it changed)' },
          changes: { type: 'array', items: { type: 'string' }, description: 'What the reload applied: channels added, removed, changed, enabled or disabled; protocols and request schemas; settings. Empty: nothing changed' },
          restart_needed: { type: 'array', items: { type: 'string' }, description: 'Settings that changed but apply only at the next restart' },
          channels_disabled: { type: 'array', items: { type: 'string' }, description: 'Each channel not serving and why (an environment variable not set names the variable)' },
          summary: { type: 'string' },
          workers: { type: 'integer', minimum: 1, description: 'The gateway processes (server.workers) that swapped the new config in' },
          workers_total: { type: 'integer', minimum: 1, description: 'The gateway processes running; a worker still starting applies the config once it listens' },
        },
      },
      ...webhookSchemas,
    },
  },
};
