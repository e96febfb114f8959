// The MCP servers as data (mcp/*.yaml, docs/mcp.md): each file checked beside the config's `mcp` section (a server has a
// `url` or, where the operator allows commands, a `command`; a grant names a server that exists), its credential chosen
// and read from the environment like a channel's.
import { chooseCredential, credentialsOf, foreignCredentialFields, secretValuesOf } from './credentials.js';
import type { ChannelCredential, McpConfig, McpPassthrough } from './generated/config-types.js';
import type { McpGrant, McpServerConfig, McpSetup } from './types.js';
import type { Problems } from './problems.js';
import type { ValidatedConfig } from './validate.js';
import { displayPath } from './yaml-source.js';

/** The header a static key goes in when its credential names none, and its value (compiled at load). */
export const MCP_STATIC_AUTH = { header: 'authorization', value: 'Bearer {{ credential }}' } as const;

/** Headers the gateway reads on its own requests: a user's token for a server never travels on one of them. */
const GATEWAY_HEADERS = new Set(['authorization', 'x-api-key', 'cookie', 'host', 'content-type', 'content-length', 'accept', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']);

/** The credential when it passes the user's own token through (`{ passthrough: <header> }`). */
const passthroughOf = (credential: unknown): McpPassthrough | undefined =>
  credential && typeof credential === 'object' && !Array.isArray(credential) && 'passthrough' in credential ? (credential as McpPassthrough) : undefined;

/** Checks the server files and the section's grants; a file with a problem is left out (the load fails anyway). */
export function checkMcp(valid: ValidatedConfig, problems: Problems, env: NodeJS.ProcessEnv, warnings: string[]): McpSetup {
  const section = valid.root.value?.mcp as McpConfig | undefined;
  const servers = new Map<string, McpServerConfig>();
  for (const { source, value } of valid.mcp) {
    if (!value) continue;
    const before = problems.list.length;
    if (!value.url && !value.command) problems.add(source, '', 'an MCP server needs a `url` (Streamable HTTP) or a `command` (stdio)');
    if (value.url && value.command) problems.add(source, '/command', 'an MCP server has a `url` or a `command`, not both');
    if (value.command && !section?.allowCommands) problems.add(source, '/command', 'local commands are not allowed: set mcp.allowCommands: true in the config file to run this server over stdio');
    if (value.command && value.credential) problems.add(source, '/credential', 'a command server takes its secrets in `env`, not a `credential`');
    if (value.env && !value.command) problems.add(source, '/env', '`env` is for a command server');
    const passthrough = passthroughOf(value.credential);
    if (passthrough && GATEWAY_HEADERS.has(passthrough.passthrough.toLowerCase())) {
      problems.add(source, '/credential/passthrough', `"${passthrough.passthrough}" is a header the gateway reads itself: name one of the server's own (x-${value.id}-token, say)`);
    }
    const alternatives = passthrough ? [] : credentialsOf(value.credential as ChannelCredential | ChannelCredential[] | undefined);
    alternatives.forEach((credential, index) => {
      const at = Array.isArray(value.credential) ? `/credential/${index}` : '/credential';
      if ((credential.kind ?? 'static') === 'aws-sigv4' || credential.kind === 'google-service-account') problems.add(source, `${at}/kind`, `an MCP server takes a static key or OAuth 2 client credentials, not ${credential.kind}`);
      for (const field of foreignCredentialFields(credential)) problems.add(source, `${at}/${field}`, `not a field of a ${credential.kind ?? 'static'} credential`, field);
    });
    const seen = servers.get(value.id);
    if (seen) problems.add(source, '/id', `MCP server "${value.id}" is already defined in ${displayPath(seen.file)}`);
    if (problems.list.length > before) continue;
    const from = passthrough && { from: passthrough.passthrough.toLowerCase(), header: passthrough.header?.toLowerCase(), value: passthrough.value };
    servers.set(value.id, resolveServer({ ...value, credential: value.credential as McpServerConfig['credential'], ...(from ? { passthrough: from } : {}), file: source.file, secretValues: [] }, alternatives, env, warnings));
  }
  const grants = (section?.grants ?? []) as McpGrant[];
  grants.forEach((grant, index) => {
    if (!servers.has(grant.server) && !valid.mcp.some((f) => (f.value ?? (f.source.value as { id?: unknown } | undefined))?.id === grant.server)) {
      problems.add(valid.root.source, `/mcp/grants/${index}/server`, `no MCP server "${grant.server}" (known: ${[...servers.keys()].join(', ') || 'none'})`);
    }
  });
  return { servers, grants, relayTokenSeconds: section?.relayTokenSeconds ?? 3600 };
}

function resolveServer(server: McpServerConfig, alternatives: ChannelCredential[], env: NodeJS.ProcessEnv, warnings: string[]): McpServerConfig {
  if (!alternatives.length) return server;
  const choice = chooseCredential(alternatives, env);
  if ('problem' in choice) {
    server.disabledReason = choice.problem;
    warnings.push(`${displayPath(server.file)}: MCP server "${server.id}" is disabled: ${choice.problem}`);
    return server;
  }
  server.auth = choice.resolved;
  server.secretValues = secretValuesOf(choice.resolved);
  return server;
}
