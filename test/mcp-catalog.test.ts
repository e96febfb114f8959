// Resources and prompts relayed through the MCP gateway, and the user's own token passed through to the one server whose
// file says so (issue 50), with the official MCP SDK as the client against fake servers built with the same SDK.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/auth/keys.js';
import { ConfigError } from '../src/base/errors.js';
import { loadConfig } from '../src/compile/load-config.js';
import { readBodies } from '../src/request-logs/bodies.js';
import { writeGrant } from '../src/store/mcp-grants.js';
import { docsCatalog, fileTools, startFakeMcp, userTools, type FakeMcp } from './kit/fake-mcp.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

let files: FakeMcp;
let docs: FakeMcp;
let github: FakeMcp;
let tracker: FakeMcp;
let gw: TestGateway;
let key: string;

const ALICE = 'alice-own-github-token';
const BOB = 'bob-own-tracker-token';

beforeAll(async () => {
  files = await startFakeMcp('files', fileTools);
  docs = await startFakeMcp('docs', docsCatalog);
  github = await startFakeMcp('github', userTools, ALICE);
  tracker = await startFakeMcp('tracker', userTools, { header: 'x-upstream-token', value: `token ${BOB}` });
  gw = await startGateway({
    channels: {},
    listen: true,
    extraConfig: 'requestLogs:\n  captureBodies: true\nmcp:\n  grants:\n    - { workspace: "*", server: files }\n    - { workspace: "*", server: docs }\n    - { workspace: "*", server: github }\n    - { workspace: "*", server: tracker }\n',
    files: {
      'mcp/files.yaml': `id: files\nurl: ${files.url}\n`,
      'mcp/docs.yaml': `id: docs\nurl: ${docs.url}\n`,
      'mcp/github.yaml': `id: github\nurl: ${github.url}\ncredential: { passthrough: x-github-token }\n`,
      'mcp/tracker.yaml': `id: tracker\nurl: ${tracker.url}\ncredential: { passthrough: x-tracker-token, header: x-upstream-token, value: "token {{ credential }}" }\n`,
    },
  });
  key = await gw.newKey({ scopes: ['mcp.tools'] });
});
afterAll(async () => {
  await gw.close();
  await Promise.all([files.close(), docs.close(), github.close(), tracker.close()]);
});

async function connect(apiKey: string, path = '/mcp', headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}${path}`), { requestInit: { headers: { authorization: `Bearer ${apiKey}`, ...headers } } }));
  return client;
}

async function refusal(call: Promise<unknown>): Promise<McpError> {
  const err = await call.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(McpError);
  return err as McpError;
}

const text = (result: unknown) => (result as { content: { text: string }[] }).content[0].text;

describe('resources and prompts through the gateway', () => {
  it('lists those of the servers that have them, at /mcp under gateway:// URIs and server-prefixed names', async () => {
    const client = await connect(key);
    expect((await client.listResources()).resources.map((r) => [r.name, r.uri])).toEqual([['today', 'gateway://docs/docs://notes/today']]);
    expect((await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate)).toEqual(['gateway://docs/docs://notes/{day}']);
    expect((await client.listPrompts()).prompts.map((p) => [p.name, p.arguments?.map((a) => a.name)])).toEqual([['docs__summarize', ['topic']]]);
    await client.close();
  });

  it('reads a resource and gets a prompt through /mcp, each logged', async () => {
    const client = await connect(key);
    const read = await client.readResource({ uri: 'gateway://docs/docs://notes/2026-05-01' });
    expect(read.contents).toEqual([{ uri: 'gateway://docs/docs://notes/2026-05-01', mimeType: 'text/plain', text: 'notes of 2026-05-01' }]);
    const prompt = await client.getPrompt({ name: 'docs__summarize', arguments: { topic: 'the release' } });
    expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Summarize the release in three lines.' } }]);
    await client.close();
    // A call's row is written once its answer has gone out: the client may have it first.
    let rows: { method: string; model: string; channel: string; status: number }[] = [];
    for (let i = 0; i < 100 && rows.length < 2; i++) {
      await gw.services.requestLogs.commitQueued();
      rows = await gw.services.db.selectFrom('request_logs').select(['method', 'model', 'channel', 'status']).where('route', '=', 'mcp').where('channel', '=', 'docs').execute();
      if (rows.length < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(rows).toEqual(expect.arrayContaining([
      { method: 'resources/read', model: 'docs__docs://notes/2026-05-01', channel: 'docs', status: 200 },
      { method: 'prompts/get', model: 'docs__summarize', channel: 'docs', status: 200 },
    ]));
  });

  it('keeps the server’s own URIs and names at /mcp/{server}, and says when a server has none', async () => {
    const client = await connect(key, '/mcp/docs');
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual(['docs://notes/today']);
    expect((await client.readResource({ uri: 'docs://notes/today' })).contents[0]).toMatchObject({ uri: 'docs://notes/today', text: 'ship the gateway' });
    expect((await client.getPrompt({ name: 'summarize', arguments: { topic: 'x' } })).messages).toHaveLength(1);
    await client.close();
    const plain = await connect(key, '/mcp/files');
    expect((await plain.listResources()).resources).toEqual([]);
    const err = await refusal(plain.readResource({ uri: 'file:///etc/passwd' }));
    expect(err.message).toContain('MCP server "files" offers no resources');
    await plain.close();
  });

  it('hides the resources and prompts of a server the key may not use, and refuses them by name', async () => {
    const issued = await issueApiKey(gw.services.db, gw.workspace, { scopes: ['mcp.tools'] });
    await writeGrant(gw.services.db, 'key', issued.id, 'files', ['read_file'], Date.now());
    const client = await connect(issued.key);
    const readsBefore = docs.calls.length;
    expect((await client.listResources()).resources).toEqual([]);
    expect((await client.listPrompts()).prompts).toEqual([]);
    expect((await refusal(client.readResource({ uri: 'gateway://docs/docs://notes/today' }))).message).toContain('resource "gateway://docs/docs://notes/today" is not available to this key');
    expect((await refusal(client.getPrompt({ name: 'docs__summarize', arguments: { topic: 'x' } }))).message).toContain('prompt "docs__summarize" is not available to this key');
    expect(docs.calls).toHaveLength(readsBefore);
    await client.close();
  });
});

describe("the user's own token", () => {
  it('goes to its server only, in the header and form its file names', async () => {
    const client = await connect(key, '/mcp', { 'x-github-token': ALICE, 'x-tracker-token': BOB });
    expect(text(await client.callTool({ name: 'github__whoami', arguments: {} }))).toBe(`you are Bearer ${ALICE}`);
    expect(text(await client.callTool({ name: 'tracker__whoami', arguments: {} }))).toBe(`you are token ${BOB}`);
    expect(text(await client.callTool({ name: 'files__read_file', arguments: { path: 'a' } }))).toBe('contents of a');
    await client.close();
    // No other server saw either token, on any header.
    for (const seen of [...files.headers, ...docs.headers, ...tracker.headers]) expect(JSON.stringify(seen)).not.toContain(ALICE);
    for (const seen of [...files.headers, ...docs.headers, ...github.headers]) expect(JSON.stringify(seen)).not.toContain(BOB);
  });

  it('is asked for by an MCP error naming its header when missing, while the other servers still list', async () => {
    const client = await connect(key);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('files__read_file');
    expect(names.some((n) => n.startsWith('github__'))).toBe(false);
    const err = await refusal(client.callTool({ name: 'github__whoami', arguments: {} }));
    expect(err.message).toContain('MCP server "github" takes your own token: send it in the "x-github-token" header');
    expect(err.data).toMatchObject({ status: 401, code: 'mcp_user_token_missing' });
    await client.close();
  });

  it('is kept out of the request log, even when the server echoes it', async () => {
    const client = await connect(key, '/mcp/github', { 'x-github-token': ALICE });
    await client.callTool({ name: 'whoami', arguments: {} });
    await client.close();
    await gw.services.requestLogs.commitQueued();
    const rows = await gw.services.db.selectFrom('request_logs').select(['body_key']).where('channel', '=', 'github').where('status', '=', 200).execute();
    const bodies = await Promise.all(rows.map((r) => readBodies(gw.services.blobs, r.body_key)));
    expect(bodies.filter(Boolean).length).toBeGreaterThan(0);
    expect(JSON.stringify(bodies)).toContain('you are Bearer [REDACTED]');
    expect(JSON.stringify(bodies)).not.toContain(ALICE);
  });
});

describe('check-config on passthrough credentials', () => {
  it("refuses a passthrough on a header the gateway reads itself, and one among a list of alternatives, at file:line:col", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-passthrough-'));
    try {
      mkdirSync(join(dir, 'mcp'));
      writeFileSync(join(dir, 'config.yaml'), 'server:\n  logLevel: silent\n');
      writeFileSync(join(dir, 'mcp', 'own.yaml'), 'id: own\nurl: https://mcp.example.com/mcp\ncredential:\n  passthrough: Authorization\n');
      writeFileSync(join(dir, 'mcp', 'list.yaml'), 'id: list\nurl: https://mcp.example.com/mcp\ncredential:\n  - passthrough: x-list-token\n');
      const err = await loadConfig(join(dir, 'config.yaml'), { env: {} }).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      const problems = (err as ConfigError).problems;
      expect(problems).toContainEqual(expect.stringMatching(/mcp\/own\.yaml:4:16 \/credential\/passthrough "Authorization" is a header the gateway reads itself/));
      expect(problems).toContainEqual(expect.stringMatching(/mcp\/list\.yaml:4:5 \/credential\/0\/passthrough unknown field "passthrough"/));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
