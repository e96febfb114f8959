// A local MCP server run over stdio by the gateway (issue 50: `command:` where the config allows commands), a node script
// built with the official SDK's stdio server, reached with the SDK's client through the gateway: one process kept for
// every call, given only PATH, HOME and its file's `env`, measured against maxResultBytes, started again after it exits,
// and ended with the gateway.
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from './kit/gateway.js';

const script = join(import.meta.dirname, 'fixtures', 'mcp', 'stdio-server.mjs');

let gw: TestGateway;
let client: Client;
let closed = false;

beforeAll(async () => {
  gw = await startGateway({
    channels: {},
    listen: true,
    env: { TEAM_NAME: 'platform', GATEWAY_ONLY_SECRET: 'never-for-the-command' },
    extraConfig: 'mcp:\n  allowCommands: true\n  grants:\n    - { workspace: "*", server: local }\n',
    files: { 'mcp/local.yaml': `id: local\ncommand: [${process.execPath}, ${script}]\nenv: { LOCAL_TEAM: "\${TEAM_NAME}" }\nmaxResultBytes: 4096\ntimeoutSeconds: 20\n` },
  });
  const key = await gw.newKey({ scopes: ['mcp.tools'] });
  client = new Client({ name: 'test-agent', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
});
afterAll(async () => {
  await client?.close();
  if (!closed) await gw?.close();
});

const text = (result: unknown) => (result as { content: { text: string }[] }).content[0].text;
const whoami = async () => JSON.parse(text(await client.callTool({ name: 'local__whoami', arguments: {} }))) as { pid: number; team: string | null; leaked: string | null };

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('a stdio MCP server', () => {
  it('lists its tools and resources through the gateway', async () => {
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['local__big', 'local__crash', 'local__whoami']);
    expect((await client.readResource({ uri: 'gateway://local/local://readme' })).contents[0]).toMatchObject({ text: 'local readme' });
  });

  it("runs one process for every call, with its file's env and none of the gateway's other variables", async () => {
    const first = await whoami();
    const second = await whoami();
    expect(first).toEqual({ pid: second.pid, team: 'platform', leaked: null });
    expect(first.pid).not.toBe(process.pid);
  });

  it('refuses an answer past maxResultBytes with an MCP error', async () => {
    const err = await client.callTool({ name: 'local__big', arguments: { bytes: 10_000 } }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).message).toContain('more than its limit of 4096 bytes');
    expect(text(await client.callTool({ name: 'local__big', arguments: { bytes: 10 } }))).toBe('x'.repeat(10));
  });

  it('starts the process again after it exits, and ends it with the gateway', async () => {
    const before = (await whoami()).pid;
    expect(text(await client.callTool({ name: 'local__crash', arguments: {} }))).toBe('bye');
    await expect.poll(() => alive(before), { timeout: 10_000 }).toBe(false);
    const after = (await whoami()).pid;
    expect(after).not.toBe(before);
    await gw.close();
    closed = true;
    await expect.poll(() => alive(after), { timeout: 10_000 }).toBe(false);
  });
});
