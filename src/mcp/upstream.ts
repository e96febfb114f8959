// Connections to the upstream MCP servers, with the official SDK's client: Streamable HTTP opened for one exchange (a
// listing, a call) with the server's credential added to every request and its answers bounded, or, for a command
// server, one stdio process per worker kept for every exchange. Failures become typed gateway errors naming the server.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { GatewayError, LimitError, UpstreamError } from '../base/errors.js';
import { MCP_STATIC_AUTH } from '../config/mcp.js';
import type { ResolvedCredential } from '../config/credentials.js';
import type { ChannelConfig, McpServerConfig, ProtocolConfig } from '../config/types.js';
import { authenticatorFor, type Authenticator } from '../engine/credentials/authenticator.js';
import { TokenCaches } from '../engine/credentials/token-cache.js';
import type { TemplateSet } from '../engine/liquid.js';

const CLIENT_INFO = { name: 'relay-gateway', version: '1' };

/** One exchange with an upstream server: its client, and how its answers went. */
export interface UpstreamSession {
  client: Client;
  /** Aborted when the exchange is cut (an answer too large, the caller gone): every request of it passes it on. */
  signal: AbortSignal;
  /** True once an answer passed the server's maxResultBytes (the exchange was cut). */
  readonly tooLarge: boolean;
  /** Every secret the exchange may have seen (the credential's, the token held now), to scrub from text. */
  secrets(): string[];
  close(): Promise<void>;
}

/** A response whose body fails once more than `max` bytes have come, calling `over()` first. */
function bounded(response: Response, max: number, over: () => void): Response {
  if (!response.body) return response;
  let seen = 0;
  const body = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        seen += chunk.byteLength;
        if (seen > max) {
          over();
          controller.error(new Error('answer too large'));
          return;
        }
        controller.enqueue(chunk);
      },
    }),
  );
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}

export class McpUpstreams {
  private readonly tokenCaches: TokenCaches;
  /** Command servers' clients, one process each, by the server config they were started for. */
  private readonly commands = new Map<McpServerConfig, Promise<Client>>();

  constructor(private readonly now: () => number) {
    this.tokenCaches = new TokenCaches(now);
  }

  /**
   * Opens an exchange with `server`; `signal` ends it (the gateway's client went away, or the deadline passed).
   * `userToken` is the user's own token, for a server whose credential passes one through (and for no other).
   */
  async open(server: McpServerConfig, templates: TemplateSet, signal: AbortSignal, userToken?: string): Promise<UpstreamSession> {
    if (server.disabledReason) throw new UpstreamError(`MCP server "${server.id}" is disabled: ${server.disabledReason}`, 503, 'mcp_server_disabled');
    if (server.passthrough && !userToken) {
      throw new GatewayError('mcp_user_token_missing', 401, 'authentication_error', `MCP server "${server.id}" takes your own token: send it in the "${server.passthrough.from}" header`);
    }
    return server.command ? this.openCommand(server) : this.openHttp(server, templates, signal, userToken);
  }

  private async openHttp(server: McpServerConfig, templates: TemplateSet, signal: AbortSignal, userToken: string | undefined): Promise<UpstreamSession> {
    const auth = this.authenticator(server, templates, userToken);
    const secrets = () => [...server.secretValues, ...(auth?.liveSecrets() ?? []), ...(userToken ? [userToken] : [])];
    let tooLarge = false;
    const cut = new AbortController();
    const both = AbortSignal.any([signal, cut.signal]);
    const transport = new StreamableHTTPClientTransport(new URL(server.url!), {
      fetch: async (url, init) => {
        const headers = new Headers(init?.headers);
        if (auth) for (const [name, value] of Object.entries(await auth.headers({ method: init?.method ?? 'GET', url: new URL(String(url)), headers: {} }))) headers.set(name, value);
        const response = await fetch(url, { ...init, headers, signal: init?.signal ? AbortSignal.any([init.signal, both]) : both });
        if ((init?.method ?? 'GET') !== 'POST') return response;
        return bounded(response, server.maxResultBytes, () => {
          tooLarge = true;
          cut.abort();
        });
      },
    });
    const client = new Client(CLIENT_INFO);
    try {
      await client.connect(transport, { signal: both, timeout: server.timeoutSeconds * 1000 });
    } catch (err) {
      await client.close().catch(() => undefined);
      throw upstreamFailure(server, err, tooLarge, secrets);
    }
    return {
      client,
      signal: both,
      get tooLarge() {
        return tooLarge;
      },
      secrets,
      close: () => client.close().catch(() => undefined),
    };
  }

  private async openCommand(server: McpServerConfig): Promise<UpstreamSession> {
    let started = this.commands.get(server);
    if (!started) {
      const [command, ...args] = server.command!;
      const transport = new StdioClientTransport({ command, args, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...server.env }, stderr: 'ignore' });
      const client = new Client(CLIENT_INFO);
      // A process that exits is started again by the next exchange.
      client.onclose = () => this.commands.delete(server);
      started = client.connect(transport, { timeout: server.timeoutSeconds * 1000 }).then(() => client);
      started.catch(() => this.commands.delete(server));
      this.commands.set(server, started);
    }
    let client: Client;
    try {
      client = await started;
    } catch (err) {
      throw upstreamFailure(server, err, false, () => []);
    }
    return { client, signal: new AbortController().signal, tooLarge: false, secrets: () => [], close: async () => undefined };
  }

  private authenticator(server: McpServerConfig, templates: TemplateSet, userToken: string | undefined): Authenticator | undefined {
    // A user's own token is a static key of this exchange alone, in the header the server's file names.
    const credential: ResolvedCredential | undefined = server.passthrough ? { kind: 'static', credential: userToken!, header: server.passthrough.header, value: server.passthrough.value } : server.auth;
    if (!credential) return undefined;
    // The credential kinds are the channels'; an MCP server is a channel of one protocol whose static key is a bearer token.
    const channel = { id: `mcp:${server.id}`, auth: credential } as ChannelConfig;
    const protocol = { auth: MCP_STATIC_AUTH } as unknown as ProtocolConfig;
    return authenticatorFor({ channel, credential, protocol, templates, now: this.now, tokenCache: (identity, fetchToken) => this.tokenCaches.of(identity, fetchToken) });
  }

  async close(): Promise<void> {
    const clients = [...this.commands.values()];
    this.commands.clear();
    await Promise.all(clients.map((c) => c.then((client) => client.close()).catch(() => undefined)));
  }
}

/** Text from an upstream with every secret it may hold replaced. */
export function scrub(text: string, secrets: string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join('[REDACTED]');
  return out.slice(0, 1000);
}

/**
 * What an upstream failure is to the gateway's client: an answer too large (a limit), a timeout (504), the server's own
 * MCP error relayed (its code and scrubbed message), else the server unreachable or refusing the gateway (502).
 */
export function upstreamFailure(server: McpServerConfig, err: unknown, tooLarge: boolean, secrets: () => string[]): Error {
  if (err instanceof UpstreamError || err instanceof LimitError) return err;
  if (tooLarge) return new LimitError(`MCP server "${server.id}" answered more than its limit of ${server.maxResultBytes} bytes (maxResultBytes)`, 'mcp_result_too_large');
  if (err instanceof McpError && err.code === ErrorCode.RequestTimeout) return new UpstreamError(`MCP server "${server.id}" did not answer within ${server.timeoutSeconds} s`, 504, 'mcp_server_timeout');
  if (err instanceof McpError && err.code !== ErrorCode.ConnectionClosed) return new McpError(err.code, scrub(err.message.replace(/^MCP error -?\d+: /, ''), secrets()), undefined);
  const status = (err as { code?: unknown }).code;
  const why = typeof status === 'number' && status >= 400 ? `answered HTTP ${status}` : 'is unreachable or closed the connection';
  return new UpstreamError(`MCP server "${server.id}" ${why}`, 502, 'mcp_server_unavailable');
}
