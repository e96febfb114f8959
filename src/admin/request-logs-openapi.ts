// The request log in the admin API's OpenAPI document: the list's query, its path and the row it returns.
import { errors, id, json, pathId, queryParams, ref } from './openapi-parts.js';

export const requestsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    status: { enum: ['success', 'error'], description: 'success: status below 400; error: 400 and above.' },
    model: { type: 'string', maxLength: 128, description: 'The model served (or, for a request refused before, the one named).' },
    key_id: id,
    route: { type: 'string', maxLength: 64, description: "The endpoint's catalogue name (chat_completions, messages, responses, ...)." },
    guardrail: { enum: ['block', 'redact', 'flag'], description: 'Only requests on which a guardrail gave this verdict (at any stage).' },
    since: { type: 'string', maxLength: 40, description: 'ISO 8601 time (or date, UTC), inclusive.' },
    until: { type: 'string', maxLength: 40, description: 'ISO 8601 time (or date, UTC), exclusive.' },
    cursor: { type: 'string', maxLength: 64, description: 'The next_cursor of the previous page.' },
    limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
  },
} as const;

export const requestLogPaths = {
  '/workspaces/{workspace_id}/requests': {
    parameters: [pathId('workspace_id')],
    get: {
      operationId: 'listRequests',
      summary: "The workspace's request log, newest first: one row per API request answered, filtered, paged by cursor",
      parameters: queryParams(requestsQuery),
      description: 'With `Accept: text/csv`, every row the filters match from the cursor on (up to 100,000), as CSV (the dashboard export\'s columns; a cell a spreadsheet would run as a formula starts with a quote).',
      responses: {
        200: { description: 'A page of rows (JSON), or every matching row as CSV', content: { ...json(ref('RequestLogPage')).content, 'text/csv': { schema: { type: 'string' } } } },
        ...errors(400, 401, 403, 404),
      },
    },
  },
};

export const requestLogSchemas = {
  RequestLog: {
    type: 'object',
    required: ['id', 'request_id', 'created_at', 'workspace_id', 'key_id', 'key_name', 'route', 'method', 'model', 'channel', 'status', 'error_type', 'error_code', 'latency_ms', 'ttft_ms', 'input_tokens', 'output_tokens', 'cached_input_tokens', 'units', 'cost', 'currency', 'trace_id', 'bodies_captured', 'attempts', 'cache', 'guardrails'],
    additionalProperties: false,
    properties: {
      id: { type: 'string', description: 'The row id (log_...): ids sort by arrival.' },
      request_id: { type: 'string', description: 'The x-request-id header of the answer.' },
      created_at: { type: 'string', format: 'date-time', description: 'When the request arrived.' },
      workspace_id: { type: 'string' },
      key_id: { type: 'string' },
      key_name: { type: ['string', 'null'], description: "The key's name now (never the key itself)." },
      route: { type: 'string', description: "The endpoint's catalogue name." },
      method: { type: 'string' },
      model: { type: 'string', description: 'The model served; the one named when the request was refused first; empty when none.' },
      channel: { type: 'string', description: 'The channel that served; empty when none did.' },
      status: { type: 'integer', description: 'The HTTP status answered (a stream that failed midway answered 200).' },
      error_type: { type: ['string', 'null'] },
      error_code: { type: ['string', 'null'] },
      latency_ms: { type: 'integer', description: 'From arrival to the end of the answer.' },
      ttft_ms: { type: ['integer', 'null'], description: 'From arrival to the first streamed event; null for an answer that was not a stream.' },
      input_tokens: { type: 'integer' },
      output_tokens: { type: 'integer' },
      cached_input_tokens: { type: 'integer' },
      units: { type: 'number', description: 'Images, seconds or other units the price counts besides tokens.' },
      cost: { type: 'number', description: 'What the request was charged, in currency (the answer’s cost.amount); 0 when nothing was.' },
      currency: { type: 'string' },
      trace_id: { type: ['string', 'null'], description: 'The OpenTelemetry trace id, when tracing is on.' },
      bodies_captured: { type: 'boolean', description: 'Whether the bodies were stored (requestLogs.captureBodies); shown on the dashboard.' },
      cache: { type: ['string', 'null'], enum: ['hit', 'miss', 'bypass', null], description: 'What the response cache did (docs/caching.md): `hit` (answered from the cache, charged as ledger kind cache_hit), `miss` (sent upstream, the answer kept), `bypass` (the request may not be cached, or the client said no-store). Null when the route does not cache.' },
      attempts: {
        type: ['array', 'null'],
        description: 'A routed request’s attempts at its targets, in order (docs/routing.md): the last with a status below 400 answered and is the one charged (a stream continued on another target: every attempt it spliced, each with its part). Null when the request was not routed.',
        items: {
          type: 'object',
          required: ['channel', 'model', 'status', 'latency_ms', 'cost'],
          additionalProperties: false,
          properties: {
            channel: { type: 'string' },
            model: { type: 'string' },
            status: { type: 'integer', description: 'The upstream’s status, or the gateway’s for a failure with none (502, 504; 400 for a target whose mapping refused the request).' },
            latency_ms: { type: 'integer', description: 'Time to the attempt’s answer head, or to its failure.' },
            cost: { type: 'number', description: 'What the attempt was charged, in the row’s currency.' },
            broken: { type: 'string', description: 'Set on an answering attempt that was not the last one: why (an error code such as upstream_unreachable or upstream_timeout, for a stream that broke and another target continued, failover.streamAfterFirstByte; content_filter, for an answer a content filter stopped and the route moved on from, failover.on). Each such attempt is charged its own part.' },
          },
        },
      },
      guardrails: {
        type: ['array', 'null'],
        description: 'Each guardrail’s verdict on each stage it ran at (docs/guardrails.md); never the text it matched. Null when no guardrail ran.',
        items: {
          type: 'object',
          required: ['id', 'stage', 'verdict', 'ms'],
          additionalProperties: false,
          properties: {
            id: { type: 'string' },
            stage: { enum: ['input', 'output', 'stream'] },
            verdict: { enum: ['pass', 'flag', 'redact', 'block'] },
            matches: { type: 'object', additionalProperties: { type: 'integer' }, description: 'Matches by detector, category or limit name (counts only).' },
            ms: { type: 'number', description: 'Time the check took.' },
            failed: { enum: ['timeout', 'error'], description: 'A check that calls out (moderation, http) could not finish; its fail mode gave the verdict.' },
          },
        },
      },
    },
  },
  RequestLogPage: {
    type: 'object',
    required: ['data', 'next_cursor'],
    additionalProperties: false,
    properties: { data: { type: 'array', items: ref('RequestLog') }, next_cursor: { type: ['string', 'null'], description: 'Pass as cursor for the next page; null on the last.' } },
  },
};
