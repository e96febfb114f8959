// Responses requests whose `mcp` tool names one of the gateway's MCP servers (issue 50, item 5), through the official
// openai SDK, against a fake Responses upstream that runs remote MCP tools itself as OpenAI's reference describes (it
// connects to server_url with the MCP SDK's client) and a fake MCP server built with the same SDK that takes only the
// gateway's credential: the upstream is pointed back at the gateway with a relay token for the key on that one server,
// so the server sees the gateway's credential, never the client's, and a server the key may not use is refused by name.
import OpenAI from 'openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/auth/keys.js';
import { mintRelayToken } from '../src/mcp/relay-tokens.js';
import { revokeApiKey } from '../src/store/api-keys.js';
import { fileTools, startFakeMcp, ticketTools, userTools, type FakeMcp } from './kit/fake-mcp.js';
import { installRemoteMcpResponses, type RemoteMcpScript } from './kit/fake-responses-mcp.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { chatChannel, startGateway, testModels, type TestGateway } from './kit/gateway.js';

let files: FakeMcp;
let tickets: FakeMcp;
let github: FakeMcp;
let fake: FakeUpstream;
let script: RemoteMcpScript;
let gw: TestGateway;
let key: string;
let client: OpenAI;

const USER_TOKEN = 'the-users-own-github-token';
const env = { FILES_MCP_TOKEN: 'files-gateway-secret', TICKETS_MCP_TOKEN: 'tickets-gateway-secret' };

beforeAll(async () => {
  files = await startFakeMcp('files', fileTools, env.FILES_MCP_TOKEN);
  tickets = await startFakeMcp('tickets', ticketTools, env.TICKETS_MCP_TOKEN);
  github = await startFakeMcp('github', userTools, USER_TOKEN);
  fake = await FakeUpstream.start();
  script = installRemoteMcpResponses(fake);
  gw = await startGateway({
    channels: { fake: chatChannel('fake', `${fake.url}/v1`, { models: testModels.fakeChat }) },
    env,
    listen: true,
    // tickets is granted to another workspace only: to this one it does not exist.
    extraConfig: 'mcp:\n  grants:\n    - { workspace: "*", server: files }\n    - { workspace: elsewhere, server: tickets }\n    - { workspace: "*", server: github }\n',
    files: {
      'mcp/files.yaml': `id: files\nurl: ${files.url}\ncredential: { env: FILES_MCP_TOKEN }\ntools: { deny: [delete_file] }\n`,
      'mcp/tickets.yaml': `id: tickets\nurl: ${tickets.url}\ncredential: { env: TICKETS_MCP_TOKEN }\n`,
      'mcp/github.yaml': `id: github\nurl: ${github.url}\ncredential: { passthrough: x-github-token }\n`,
    },
  });
  key = await gw.newKey({ scopes: ['llm.chat', 'mcp.tools'] });
  client = new OpenAI({ apiKey: key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
});
afterAll(async () => {
  await gw.close();
  await Promise.all([files.close(), tickets.close(), github.close(), fake.close()]);
});
beforeEach(() => {
  fake.reset();
  script.seen.length = 0;
  script.call = { serverLabel: 'files', name: 'read_file', arguments: '{"path":"notes.txt"}' };
  files.authorizations.length = 0;
});

const mcpTool = (serverUrl: string, extra: Record<string, unknown> = {}) => ({ type: 'mcp' as const, server_label: 'files', server_url: serverUrl, require_approval: 'never' as const, ...extra });
const sentTool = () => fake.requests.find((r) => r.path.endsWith('/responses'))?.body.tools[0];

async function refusal(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const err = await call.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(OpenAI.APIError);
  return err as InstanceType<typeof OpenAI.APIError>;
}

describe('a Responses mcp tool naming a gateway MCP server', () => {
  it('is served through the gateway with its credential for the server: the listing and the call come back as mcp items', async () => {
    const res = await client.responses.create({ model: 'fake-chat', input: 'What do my notes say?', tools: [mcpTool('gateway://files', { authorization: 'client-own-token', headers: { Authorization: 'Bearer client-own-token' } })] });
    const [list, call] = res.output as unknown as Record<string, any>[];
    expect(list).toMatchObject({ type: 'mcp_list_tools', server_label: 'files' });
    // What the key may call: the file's deny list holds.
    expect(list.tools.map((t: { name: string }) => t.name).sort()).toEqual(['big', 'count', 'read_file']);
    expect(call).toMatchObject({ type: 'mcp_call', name: 'read_file', output: 'contents of notes.txt', error: null });
    expect(res.output_text).toBe('The tool said: contents of notes.txt');
    // The upstream was sent the gateway's own endpoint and a relay token, never the client's authorization.
    expect(sentTool()).toMatchObject({ type: 'mcp', server_label: 'files', server_url: `${gw.url}/mcp/files`, authorization: expect.stringMatching(/^gwmcp_/) });
    expect(sentTool().headers).toBeUndefined();
    // The server saw only the gateway's credential.
    expect(files.authorizations.length).toBeGreaterThan(0);
    expect(new Set(files.authorizations)).toEqual(new Set([`Bearer ${env.FILES_MCP_TOKEN}`]));
  });

  it("takes the gateway's own address as well, and leaves a request-log row for the tool call beside the model call", async () => {
    const res = await client.responses.create({ model: 'fake-chat', input: 'Read it', tools: [mcpTool(`${gw.url}/mcp/files`)] });
    expect(res.output_text).toBe('The tool said: contents of notes.txt');
    expect(sentTool().server_url).toBe(`${gw.url}/mcp/files`);
    await gw.services.requestLogs.commitQueued();
    const rows = await gw.services.db.selectFrom('request_logs').select(['route', 'method', 'model', 'channel', 'status']).where('route', '=', 'mcp').execute();
    expect(rows).toContainEqual({ route: 'mcp', method: 'tools/call', model: 'files__read_file', channel: 'files', status: 200 });
  });

  it('refuses a server the key may not use with a 403 naming it, before the upstream is asked', async () => {
    for (const url of ['gateway://tickets', 'gateway://nowhere']) {
      const err = await refusal(client.responses.create({ model: 'fake-chat', input: 'x', tools: [mcpTool(url)] }));
      expect(err.status).toBe(403);
      expect(err.code).toBe('mcp_server_not_granted');
      expect(err.message).toContain(`MCP server "${url.slice('gateway://'.length)}" (tools[0].server_url) is not available to this key`);
    }
    expect(fake.requests).toHaveLength(0);
    expect(tickets.calls).toHaveLength(0);
  });

  it('refuses a key without the mcp.tools scope, naming the server', async () => {
    const chatOnly = new OpenAI({ apiKey: await gw.newKey({ scopes: ['llm.chat'] }), baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const err = await refusal(chatOnly.responses.create({ model: 'fake-chat', input: 'x', tools: [mcpTool('gateway://files')] }));
    expect(err.status).toBe(403);
    expect(err.message).toContain('MCP server "files" (tools[0].server_url) is not available to this key: the key lacks the scope "mcp.tools"');
  });

  it("refuses the gateway's aggregate /mcp in a tool: a tool names one server", async () => {
    const err = await refusal(client.responses.create({ model: 'fake-chat', input: 'x', tools: [mcpTool(`${gw.url}/mcp`)] }));
    expect(err.status).toBe(400);
    expect(err.message).toContain('name one server');
  });

  it("carries the user's own token on the header the server's file names for it, to that server alone", async () => {
    script.call = { serverLabel: 'github', name: 'whoami', arguments: '{}' };
    const res = await client.responses.create({ model: 'fake-chat', input: 'Who am I?', tools: [{ ...mcpTool('gateway://github'), server_label: 'github', headers: { 'x-github-token': USER_TOKEN } }] });
    expect(res.output_text).toBe(`The tool said: you are Bearer ${USER_TOKEN}`);
    expect(sentTool().headers).toEqual({ 'x-github-token': USER_TOKEN });
    expect(github.authorizations.at(-1)).toBe(`Bearer ${USER_TOKEN}`);
  });

  it('relays an mcp tool naming any other server as the client sent it', async () => {
    script.call = undefined;
    await client.responses.create({ model: 'fake-chat', input: 'x', tools: [mcpTool(files.url, { authorization: env.FILES_MCP_TOKEN })] });
    expect(sentTool()).toMatchObject({ server_url: files.url, authorization: env.FILES_MCP_TOKEN });
  });
});

describe('the relay token an upstream is given', () => {
  async function tokenFor(apiKey: string): Promise<string> {
    const own = new OpenAI({ apiKey, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    script.call = undefined;
    await own.responses.create({ model: 'fake-chat', input: 'x', tools: [mcpTool('gateway://files')] });
    return sentTool().authorization as string;
  }

  async function listWith(token: string, path: string): Promise<string[]> {
    const mcp = new Client({ name: 'upstream', version: '1' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}${path}`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    try {
      return (await mcp.listTools()).tools.map((t) => t.name);
    } finally {
      await mcp.close();
    }
  }

  it('opens only the server it was minted for', async () => {
    const token = await tokenFor(key);
    expect((await listWith(token, '/mcp/files')).sort()).toEqual(['big', 'count', 'read_file']);
    await expect(listWith(token, '/mcp')).rejects.toThrow(/this MCP relay token is for the gateway's MCP server \W+files\W+ only/);
    await expect(listWith(token, '/mcp/tickets')).rejects.toThrow(/this MCP relay token is for the gateway's MCP server \W+files\W+ only/);
  });

  it('stops working once its key is revoked', async () => {
    const issued = await issueApiKey(gw.services.db, gw.workspace, { scopes: ['llm.chat', 'mcp.tools'] });
    const token = await tokenFor(issued.key);
    await revokeApiKey(gw.services.db, issued.id);
    const answer = await fetch(`${gw.url}/mcp/files`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}' });
    expect(answer.status).toBe(401);
    expect(((await answer.json()) as { error: { message: string } }).error.message).toContain('revoked');
  });

  it('is refused once it has expired', async () => {
    const issued = await issueApiKey(gw.services.db, gw.workspace, { scopes: ['mcp.tools'] });
    const token = await mintRelayToken(gw.services.db, issued.id, 'files', 60, Date.now() - 61_000);
    await expect(listWith(token, '/mcp/files')).rejects.toThrow(/this MCP relay token has expired/);
  });

  it('is refused when tampered with', async () => {
    const token = await tokenFor(key);
    const [payload, mac] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload.slice('gwmcp_'.length), 'base64url').toString()), s: 'tickets' })).toString('base64url');
    await expect(listWith(`gwmcp_${forged}.${mac}`, '/mcp/tickets')).rejects.toThrow(/invalid MCP relay token/);
  });
});
