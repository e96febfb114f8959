// The MCP gateway's tool grants in the admin API's OpenAPI document: the body that sets one, the paths, the grant returned.
import { body, errors, json, list, pathId, ref } from './openapi-parts.js';

export const setMcpGrant = {
  type: 'object',
  required: ['server', 'tools'],
  additionalProperties: false,
  properties: {
    server: { type: 'string', minLength: 1, maxLength: 64, description: 'An MCP server id (mcp/*.yaml); granting needs one the gateway serves.' },
    tools: { type: ['array', 'null'], maxItems: 256, items: { type: 'string', minLength: 1, maxLength: 128 }, description: 'Tool names, or patterns with `*`; null removes the grant.' },
  },
} as const;

/** A workspace's or a key's tool grants on MCP servers: list, and set or remove one server's. */
function mcpGrants(pathParam: string, subject: 'key' | 'workspace') {
  const Subject = subject === 'key' ? 'Key' : 'Workspace';
  const meaning = subject === 'key' ? "A key with grants of its own may use only those among its workspace's." : "Added to what the config file's mcp.grants give the workspace.";
  return {
    parameters: [pathId(pathParam)],
    get: { operationId: `list${Subject}McpGrants`, summary: `The ${subject}'s tools on MCP servers (docs/mcp.md)`, responses: { 200: json(list('McpGrant')), ...errors(401, 403, 404) } },
    put: {
      operationId: `set${Subject}McpGrant`,
      summary: `Set the ${subject}'s tools on one MCP server; tools null removes the grant. ${meaning} Audited as ${subject}.mcp_grant.`,
      requestBody: body(setMcpGrant),
      responses: { 200: json(ref('McpGrant')), ...errors(400, 401, 403, 404) },
    },
  };
}

export const mcpGrantPaths = {
  '/workspaces/{workspace_id}/mcp_grants': mcpGrants('workspace_id', 'workspace'),
  '/keys/{key_id}/mcp_grants': mcpGrants('key_id', 'key'),
};

export const mcpGrantSchemas = {
  McpGrant: {
    type: 'object',
    required: ['server', 'tools'],
    additionalProperties: false,
    properties: { server: { type: 'string' }, tools: { type: ['array', 'null'], items: { type: 'string' }, description: 'null once removed.' } },
  },
};
