// The MCP gateway (issue 50) with the official MCP SDK as the client, against two fake MCP servers built with the same
// SDK (one behind OAuth 2 client credentials, its token from a fake token endpoint): a key sees and calls only its
// tools, a call streams its progress, a refused tool is named, a server down is an MCP error at once, a priced tool is
// charged and refused at the cap, and each call leaves a request-log row and metrics.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMCPClient } from '@ai-sdk/mcp';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs } from 'ai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/compile/load-config.js';
import { ConfigError } from '../src/base/errors.js';
import { newAdminToken } from '../src/admin/auth.js';
import { adminApi, type AdminApi } from './kit/admin-api.js';
import { fileTools, startFakeMcp, startTokenEndpoint, ticketTools, type FakeMcp } from './kit/fake-mcp.js';
import { startGateway, testModels, chatChannel, type TestGateway } from './kit/gateway.js';
import { FakeUpstream } from './kit/fake-upstream.js';

let files: FakeMcp;
let tickets: FakeMcp;
let tokens: Awaited<ReturnType<typeof startTokenEndpoint>>;
let gw: TestGateway;
let fake: FakeUpstream;
let key: string;
let api: AdminApi;
const ops = newAdminToken();

const env = { TICKETS_CLIENT_ID: 'gateway-client', TICKETS_CLIENT_SECRET: 'tickets-secret-value' };

beforeAll(async () => {
  tokens = await startTokenEndpoint(env.TICKETS_CLIENT_ID, env.TICKETS_CLIENT_SECRET, 'tickets-token-1');
  files = await startFakeMcp('files', fileTools);
  fake = await FakeUpstream.start();
  tickets = await startFakeMcp('tickets', ticketTools, 'tickets-token-1');
  gw = await startGateway({
    channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: testModels.flatChat }) },
    env,
    listen: true,
    extraConfig: `admin:\n  tokens:\n    - id: ops\n      sha256: ${ops.sha256}\nmcp:\n  grants:\n    - { workspace: "*", server: files }\n    - { workspace: test, server: tickets, tools: [create_ticket, list_tickets] }\n    - { workspace: "*", server: down }\n`,
    files: {
      'mcp/files.yaml': `id: files\nurl: ${files.url}\ntools: { deny: [delete_file] }\nmaxResultBytes: 4096\nrateLimits: { perTool: { read_file: 5 } }\n`,
      'mcp/tickets.yaml': `id: tickets
url: ${tickets.url}
credential:
  kind: oauth2-client-credentials
  tokenUrl: ${tokens.url}
  clientIdEnv: TICKETS_CLIENT_ID
  clientSecretEnv: TICKETS_CLIENT_SECRET
  scope: tickets
pricePerCall: { create_ticket: 0.01 }
`,
      'mcp/down.yaml': 'id: down\nurl: http://127.0.0.1:9/mcp\ntimeoutSeconds: 5\n',
    },
  });
  key = await gw.newKey({ scopes: ['mcp.tools'] });
  api = await adminApi(gw.url, ops.token);
});
afterAll(async () => {
  await gw.close();
  await Promise.all([files.close(), tickets.close(), tokens.close(), fake.close()]);
});

async function connect(apiKey: string, path = '/mcp'): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}${path}`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }));
  return client;
}

async function refusal(call: Promise<unknown>): Promise<McpError> {
  const err = await call.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(McpError);
  return err as McpError;
}

const text = (result: unknown) => ((result as { content: { type: string; text: string }[] }).content[0]).text;

describe('the MCP gateway', () => {
  it('lists every tool the key may call, prefixed by server, and none the config denies', async () => {
    const client = await connect(key);
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    // The server down is left out of the aggregate list; delete_file is denied by the server's file.
    expect(names).toEqual(['files__big', 'files__count', 'files__read_file', 'tickets__create_ticket', 'tickets__list_tickets']);
    await client.close();
  });

  it('shows a key given grants of its own through the admin API only those tools, refuses any other by name, and audits the grant', async () => {
    const created = (await api('POST', `/workspaces/${gw.workspace.id}/keys`, { body: { name: 'narrow', scopes: ['mcp.tools'] } })).body;
    const narrow = created.key as string;
    expect((await api('PUT', `/keys/${created.id}/mcp_grants`, { body: { server: 'files', tools: ['read_file'] } })).body).toEqual({ server: 'files', tools: ['read_file'] });
    expect((await api('PUT', `/keys/${created.id}/mcp_grants`, { body: { server: 'nowhere', tools: ['*'] } })).status).toBe(400);
    expect((await api('GET', `/keys/${created.id}/mcp_grants`)).body.data).toEqual([{ server: 'files', tools: ['read_file'] }]);
    const audit = await gw.services.db.selectFrom('audit_log').select(['action', 'after']).where('target_id', '=', created.id).where('action', '=', 'key.mcp_grant').execute();
    expect(audit.map((r) => JSON.parse(r.after!))).toEqual([{ server: 'files', tools: ['read_file'] }]);
    const client = await connect(narrow);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['files__read_file']);
    const err = await refusal(client.callTool({ name: 'tickets__create_ticket', arguments: { title: 'x' } }));
    expect(err.message).toContain('tool "tickets__create_ticket" is not available to this key');
    expect(tickets.calls).not.toContain('create_ticket');
    await client.close();
  });

  it('calls a tool at /mcp/{server} by its own name and relays its progress as it streams', async () => {
    const client = await connect(key, '/mcp/files');
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['big', 'count', 'read_file']);
    const progress: { progress: number; message?: string }[] = [];
    const result = await client.callTool({ name: 'count', arguments: {} }, undefined, { onprogress: (p) => progress.push(p) });
    expect(text(result)).toBe('counted to 3');
    expect(progress.map((p) => [p.progress, p.message])).toEqual([[1, 'step 1'], [2, 'step 2'], [3, 'step 3']]);
    await client.close();
  });

  it('calls a server behind OAuth 2 client credentials with the token it mints, never the key', async () => {
    const client = await connect(key);
    expect(text(await client.callTool({ name: 'tickets__list_tickets', arguments: {} }))).toBe('no tickets');
    expect(tickets.authorizations.at(-1)).toBe('Bearer tickets-token-1');
    expect(tickets.authorizations.some((a) => a?.includes(key))).toBe(false);
    await client.close();
  });

  it('refuses a denied tool by name, even called directly', async () => {
    const client = await connect(key);
    const err = await refusal(client.callTool({ name: 'files__delete_file', arguments: { path: '/etc' } }));
    expect(err.message).toContain('"files__delete_file" is not available');
    expect(files.calls).not.toContain('delete_file');
    await client.close();
  });

  it('answers a call to a server that is down with an MCP error naming it', async () => {
    const client = await connect(key);
    const err = await refusal(client.callTool({ name: 'down__anything', arguments: {} }));
    expect(err.message).toContain('MCP server "down" is unreachable');
    expect(err.data).toMatchObject({ status: 502, code: 'mcp_server_unavailable' });
    await client.close();
  });

  it('refuses an answer larger than the server may send', async () => {
    const client = await connect(key);
    const err = await refusal(client.callTool({ name: 'files__big', arguments: { bytes: 10_000 } }));
    expect(err.message).toContain('more than its limit of 4096 bytes');
    expect(text(await client.callTool({ name: 'files__big', arguments: { bytes: 10 } }))).toBe('x'.repeat(10));
    await client.close();
  });

  it('charges a priced tool in the ledger and refuses it once the key cap is spent', async () => {
    const capped = await gw.newKey({ scopes: ['mcp.tools'], spendCapMicros: 15_000 });
    const client = await connect(capped);
    expect(text(await client.callTool({ name: 'tickets__create_ticket', arguments: { title: 'first' } }))).toBe('opened "first"');
    const err = await refusal(client.callTool({ name: 'tickets__create_ticket', arguments: { title: 'second' } }));
    expect(err.message).toMatch(/exhausted/);
    expect(err.data).toMatchObject({ status: 402 });
    expect(tickets.calls.filter((c) => c === 'create_ticket')).toHaveLength(1);
    await gw.services.spend.commitQueued?.();
    const ledger = await gw.services.db.selectFrom('usage_ledger').select(['model', 'channel', 'kind', 'cost_micros']).where('model', '=', 'tickets__create_ticket').execute();
    expect(ledger).toEqual([{ model: 'tickets__create_ticket', channel: 'tickets', kind: 'mcp_tool', cost_micros: 10_000 }]);
    await client.close();
  });

  it('refuses a key without the mcp.tools scope', async () => {
    const chatOnly = await gw.newKey({ scopes: ['llm.chat'] });
    const answer = await fetch(`${gw.url}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${chatOnly}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
    expect(answer.status).toBe(403);
  });

  it('leaves a request-log row and metrics for each tool call', async () => {
    const client = await connect(key);
    await client.callTool({ name: 'files__read_file', arguments: { path: 'a.txt' } });
    await client.close();
    await gw.services.requestLogs.commitQueued();
    const rows = await gw.services.db.selectFrom('request_logs').select(['route', 'method', 'model', 'channel', 'status', 'error_code']).where('route', '=', 'mcp').execute();
    expect(rows).toContainEqual({ route: 'mcp', method: 'tools/call', model: 'files__read_file', channel: 'files', status: 200, error_code: null });
    expect(rows).toContainEqual({ route: 'mcp', method: 'tools/call', model: 'down__anything', channel: 'down', status: 502, error_code: 'mcp_server_unavailable' });
    expect(rows).toContainEqual({ route: 'mcp', method: 'tools/call', model: 'tickets__create_ticket', channel: 'tickets', status: 402, error_code: expect.any(String) });
    const metrics = await gw.services.metrics.scrape();
    expect(metrics).toContain('gateway_mcp_tool_calls_total{server="files",tool="read_file",status="200"} 1');
    expect(metrics).toMatch(/gateway_mcp_tool_call_seconds_count\{server="files",tool="read_file"\} 1/);
  });
});

describe('an AI SDK agent through the gateway', () => {
  it('completes a two-tool task with the model and the tools both behind the gateway', async () => {
    const agentKey = await gw.newKey({ scopes: ['llm.chat', 'mcp.tools'] });
    // The model reads a file first, then opens a ticket about it, then answers.
    fake.route((req, _res, f) => {
      if (!req.path.endsWith('/chat/completions')) return false;
      const done = (req.body?.messages ?? []).filter((m: { role: string }) => m.role === 'tool').length;
      const next = [
        { id: 'call_1', name: 'files__read_file', arguments: '{"path":"notes.txt"}' },
        { id: 'call_2', name: 'tickets__create_ticket', arguments: '{"title":"notes.txt needs review"}' },
      ][done];
      f.chat = next ? { text: '', toolCalls: [next], usage: { prompt_tokens: 10, completion_tokens: 5 } } : { text: 'Ticket opened.', usage: { prompt_tokens: 10, completion_tokens: 3 } };
      return false;
    });
    const mcp = await createMCPClient({ transport: { type: 'http', url: `${gw.url}/mcp`, headers: { authorization: `Bearer ${agentKey}` } } });
    try {
      const openai = createOpenAI({ baseURL: `${gw.url}/v1`, apiKey: agentKey });
      const result = await generateText({ model: openai.chat('flat-chat'), tools: await mcp.tools(), stopWhen: stepCountIs(5), prompt: 'Open a ticket about notes.txt' });
      expect(result.text).toBe('Ticket opened.');
      const results = result.steps.flatMap((step) => step.toolResults.map((r) => [r.toolName, text(r.output)]));
      expect(results).toEqual([['files__read_file', 'contents of notes.txt'], ['tickets__create_ticket', 'opened "notes.txt needs review"']]);
    } finally {
      await mcp.close();
    }
  });
});

describe('check-config on MCP servers', () => {
  it('refuses a server without a URL or command, a grant naming an unknown server, and a command where commands are not allowed, each at file:line:col', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-config-'));
    try {
      mkdirSync(join(dir, 'mcp'));
      writeFileSync(join(dir, 'config.yaml'), 'server:\n  logLevel: silent\nmcp:\n  grants:\n    - workspace: "*"\n      server: nowhere\n');
      writeFileSync(join(dir, 'mcp', 'empty.yaml'), 'id: empty\ntools: { allow: ["*"] }\n');
      writeFileSync(join(dir, 'mcp', 'local.yaml'), 'id: local\ncommand: [node, server.js]\n');
      const err = await loadConfig(join(dir, 'config.yaml'), { env: {} }).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems;
      expect(problems).toContainEqual(expect.stringMatching(/mcp\/empty\.yaml:1:1 \/ an MCP server needs a `url` \(Streamable HTTP\) or a `command` \(stdio\)/));
      expect(problems).toContainEqual(expect.stringMatching(/mcp\/local\.yaml:2:10 \/command local commands are not allowed/));
      expect(problems).toContainEqual(expect.stringMatching(/config\.yaml:6:15 \/mcp\/grants\/0\/server no MCP server "nowhere"/));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
