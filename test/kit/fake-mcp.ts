// Fake MCP servers for tests, built with the official SDK's McpServer on 127.0.0.1 (Streamable HTTP, stateless), with an
// optional bearer token they require and a fake OAuth 2 token endpoint (client credentials) that mints it.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface FakeMcp {
  url: string;
  /** Authorization headers the server was sent, in order. */
  authorizations: (string | undefined)[];
  /** Every request's headers, in order. */
  headers: IncomingHttpHeaders[];
  /** Tool calls it answered, by tool name. */
  calls: string[];
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/**
 * A server with `tools(server, calls, req)` registered, requiring `Bearer <token>` in authorization when a token is given
 * (or the exact `value` in `header`).
 */
export async function startFakeMcp(name: string, tools: (server: McpServer, calls: string[], req: IncomingMessage) => void, token?: string | { header: string; value: string }): Promise<FakeMcp> {
  const authorizations: (string | undefined)[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const calls: string[] = [];
  const required = typeof token === 'string' ? { header: 'authorization', value: `Bearer ${token}` } : token;
  const http = createServer(async (req, res) => {
    authorizations.push(req.headers.authorization);
    headers.push(req.headers);
    if (required && req.headers[required.header] !== required.value) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
      return;
    }
    const mcp = new McpServer({ name, version: '1' });
    tools(mcp, calls, req);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => void mcp.close());
    await mcp.connect(transport);
    await transport.handleRequest(req, res, req.method === 'POST' ? await readJson(req) : undefined);
  });
  const url = `${await listen(http)}/mcp`;
  return { url, authorizations, headers, calls, close: () => new Promise((resolve) => http.close(() => resolve())) };
}

/** A files server: read_file, delete_file, count (reports progress three times) and big (an answer of `bytes` bytes). */
export function fileTools(server: McpServer, calls: string[]): void {
  server.registerTool('read_file', { description: 'Reads a file', inputSchema: { path: z.string() } }, async ({ path }) => {
    calls.push('read_file');
    return { content: [{ type: 'text', text: `contents of ${path}` }] };
  });
  server.registerTool('delete_file', { description: 'Deletes a file', inputSchema: { path: z.string() } }, async () => {
    calls.push('delete_file');
    return { content: [{ type: 'text', text: 'deleted' }] };
  });
  server.registerTool('count', { description: 'Counts to three, reporting progress' }, async (extra) => {
    calls.push('count');
    const progressToken = extra._meta?.progressToken;
    for (let i = 1; i <= 3 && progressToken !== undefined; i++) {
      await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: i, total: 3, message: `step ${i}` } });
    }
    return { content: [{ type: 'text', text: 'counted to 3' }] };
  });
  server.registerTool('big', { description: 'Answers many bytes', inputSchema: { bytes: z.number() } }, async ({ bytes }) => {
    calls.push('big');
    return { content: [{ type: 'text', text: 'x'.repeat(bytes) }] };
  });
}

/** A tickets server: create_ticket and list_tickets. */
export function ticketTools(server: McpServer, calls: string[]): void {
  server.registerTool('create_ticket', { description: 'Opens a ticket', inputSchema: { title: z.string() } }, async ({ title }) => {
    calls.push('create_ticket');
    return { content: [{ type: 'text', text: `opened "${title}"` }] };
  });
  server.registerTool('list_tickets', { description: 'Lists tickets' }, async () => {
    calls.push('list_tickets');
    return { content: [{ type: 'text', text: 'no tickets' }] };
  });
}

/** An OAuth 2 token endpoint for the client credentials grant: `token` for the right client id and secret, else 401. */
export async function startTokenEndpoint(clientId: string, clientSecret: string, token: string): Promise<{ url: string; requests: number; close(): Promise<void> }> {
  const state = { url: '', requests: 0, close: async () => undefined as void };
  const http = createServer(async (req, res) => {
    state.requests++;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    const ok = form.get('grant_type') === 'client_credentials' && form.get('client_id') === clientId && form.get('client_secret') === clientSecret;
    res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' }).end(JSON.stringify(ok ? { access_token: token, token_type: 'Bearer', expires_in: 3600 } : { error: 'invalid_client' }));
  });
  state.url = `${await listen(http)}/token`;
  state.close = () => new Promise((resolve) => http.close(() => resolve()));
  return state;
}

/** A docs server with resources (one fixed, one template), a prompt and a tool. */
export function docsCatalog(server: McpServer, calls: string[]): void {
  server.registerResource('today', 'docs://notes/today', { description: "Today's notes", mimeType: 'text/plain' }, async (uri) => {
    calls.push(`read ${uri.href}`);
    return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'ship the gateway' }] };
  });
  server.registerResource('day', new ResourceTemplate('docs://notes/{day}', { list: undefined }), { description: 'Notes of a day' }, async (uri, { day }) => {
    calls.push(`read ${uri.href}`);
    return { contents: [{ uri: uri.href, mimeType: 'text/plain', text: `notes of ${String(day)}` }] };
  });
  server.registerPrompt('summarize', { description: 'Summarizes a topic', argsSchema: { topic: z.string() } }, async ({ topic }) => {
    calls.push('summarize');
    return { messages: [{ role: 'user', content: { type: 'text', text: `Summarize ${topic} in three lines.` } }] };
  });
  server.registerTool('search', { description: 'Searches the docs', inputSchema: { q: z.string() } }, async ({ q }) => {
    calls.push('search');
    return { content: [{ type: 'text', text: `nothing found for ${q}` }] };
  });
}

/** A server acting as the user it is sent (whoami answers with the token it saw, as a careless server might). */
export function userTools(server: McpServer, calls: string[], req: IncomingMessage): void {
  server.registerTool('whoami', { description: 'Says who the caller is' }, async () => {
    calls.push('whoami');
    return { content: [{ type: 'text', text: `you are ${req.headers.authorization ?? req.headers['x-upstream-token']}` }] };
  });
}
