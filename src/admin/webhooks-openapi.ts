// The task webhooks' part of the admin API's OpenAPI document: paths, request schemas (the routes validate with these)
// and the endpoint and delivery objects.
import { body, errors, id, json, list, pathId, queryParams, ref } from './openapi-parts.js';

const url = { type: 'string', minLength: 1, maxLength: 2048, description: 'https on the default port, a public address (network.allowHosts lists exceptions).' } as const;
const events = {
  type: 'array',
  minItems: 1,
  maxItems: 32,
  items: { type: 'string', pattern: '^[a-z][a-z0-9_-]{0,31}\\.(completed|failed|blocked)$' },
  description: "The event types sent to this endpoint: a task family's `<object>.completed` and `<object>.failed` (video.completed), batch.completed, batch.failed, guardrail.blocked.",
} as const;
const unixOrNull = { type: ['integer', 'null'] } as const;

export const webhookRequestSchemas = {
  createWebhook: {
    type: 'object',
    required: ['url'],
    additionalProperties: false,
    properties: { url, events: { ...events, description: 'Absent: every task and batch event type (guardrail.blocked only when named).' }, enabled: { type: 'boolean', default: true } },
  },
  updateWebhook: { type: 'object', additionalProperties: false, minProperties: 1, properties: { url, events, enabled: { type: 'boolean' } } },
  deliveriesQuery: {
    type: 'object',
    additionalProperties: false,
    properties: { before: { type: 'string', maxLength: 64, description: 'The last id of the previous page.' }, limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
  },
} as const;

const endpointRequired = ['id', 'workspace_id', 'url', 'events', 'enabled', 'created_at'];
const endpointProperties = { id: { type: 'string' }, workspace_id: { type: 'string' }, url: { type: 'string' }, events: { type: 'array', items: { type: 'string' } }, enabled: { type: 'boolean' }, created_at: { type: 'integer' } };
const endpointWithSecret = {
  type: 'object',
  required: [...endpointRequired, 'secret'],
  additionalProperties: false,
  properties: { ...endpointProperties, secret: { type: 'string', description: 'The signing secret ("whsec_" + base64): store it now, it is not shown again.' } },
};

export const webhookPaths = {
  '/workspaces/{workspace_id}/webhooks': {
    parameters: [pathId('workspace_id')],
    get: { operationId: 'listWebhooks', summary: "A workspace's webhook endpoints (never their secrets)", responses: { 200: json(list('Webhook')), ...errors(401, 403, 404) } },
    post: {
      operationId: 'createWebhook',
      summary: 'Register an https endpoint for task events: the answer holds its signing secret, shown this once',
      requestBody: body(webhookRequestSchemas.createWebhook),
      responses: { 201: json(ref('CreatedWebhook'), 'Created'), ...errors(400, 401, 403, 404) },
    },
  },
  '/webhooks/{webhook_id}': {
    parameters: [pathId('webhook_id')],
    get: { operationId: 'getWebhook', summary: 'One webhook endpoint', responses: { 200: json(ref('Webhook')), ...errors(401, 403, 404) } },
    patch: {
      operationId: 'updateWebhook',
      summary: 'Enable or disable an endpoint, or change its URL or events',
      requestBody: body(webhookRequestSchemas.updateWebhook),
      responses: { 200: json(ref('Webhook')), ...errors(400, 401, 403, 404) },
    },
    delete: { operationId: 'deleteWebhook', summary: 'Remove an endpoint (its pending deliveries are dropped)', responses: { 204: { description: 'Removed' }, ...errors(401, 403, 404) } },
  },
  '/webhooks/{webhook_id}/rotate-secret': {
    parameters: [pathId('webhook_id')],
    post: {
      operationId: 'rotateWebhookSecret',
      summary: 'A new signing secret, shown this once; the old one also signs for webhooks.rotationGraceSeconds',
      responses: { 200: json(ref('CreatedWebhook')), ...errors(401, 403, 404) },
    },
  },
  '/webhooks/{webhook_id}/deliveries': {
    parameters: [pathId('webhook_id')],
    get: {
      operationId: 'listWebhookDeliveries',
      summary: "The endpoint's deliveries, newest first",
      parameters: queryParams(webhookRequestSchemas.deliveriesQuery),
      responses: { 200: json(ref('WebhookDeliveryPage')), ...errors(400, 401, 403, 404) },
    },
  },
};

export const webhookSchemas = {
  Webhook: { type: 'object', required: endpointRequired, additionalProperties: false, properties: endpointProperties },
  CreatedWebhook: endpointWithSecret,
  WebhookDelivery: {
    type: 'object',
    required: ['id', 'event_type', 'task_id', 'status', 'attempts', 'created_at', 'last_attempt_at', 'next_attempt_at', 'last_status', 'last_error'],
    additionalProperties: false,
    properties: {
      id: { type: 'string', description: 'The webhook-id header: the same on every attempt.' },
      event_type: { type: 'string' },
      task_id: id,
      status: { enum: ['pending', 'delivered', 'failed'] },
      attempts: { type: 'integer' },
      created_at: { type: 'integer' },
      last_attempt_at: unixOrNull,
      next_attempt_at: { ...unixOrNull, description: 'When a pending delivery is tried next.' },
      last_status: { type: ['integer', 'null'], description: "The receiver's last HTTP status; null when it could not be reached." },
      last_error: { type: ['string', 'null'] },
    },
  },
  WebhookDeliveryPage: { type: 'object', required: ['data', 'has_more'], additionalProperties: false, properties: { data: { type: 'array', items: ref('WebhookDelivery') }, has_more: { type: 'boolean' } } },
};
