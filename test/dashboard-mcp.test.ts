// Settings > MCP tools over HTTP (no browser): owners and admins see each MCP server with the tools it lists to the
// gateway, and the grants of the workspace and its keys; they grant a server's tools to a key (which the key then sees
// through the official MCP SDK's client) and remove a grant, each audited as the user; members neither see nor reach it.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueApiKey } from '../src/auth/keys.js';
import { findApiKeyById } from '../src/store/api-keys.js';
import type { Workspace } from '../src/store/workspaces.js';
import { DashboardClient, addUser } from './kit/dashboard.js';
import { fileTools, startFakeMcp, type FakeMcp } from './kit/fake-mcp.js';
import { startGateway, type TestGateway } from './kit/gateway.js';

let files: FakeMcp;
let gw: TestGateway;
let other: Workspace;
let keyId: string;
let key: string;

beforeAll(async () => {
  files = await startFakeMcp('files', fileTools, 'files-secret');
  gw = await startGateway({
    channels: {},
    listen: true,
    env: { FILES_MCP_TOKEN: 'files-secret' },
    extraConfig: 'mcp:\n  grants:\n    - { workspace: "*", server: files, tools: [read_file, count] }\n',
    files: {
      'mcp/files.yaml': `id: files\nurl: ${files.url}\ncredential: { env: FILES_MCP_TOKEN }\ntools: { deny: [delete_file] }\npricePerCall: { count: 0.01 }\n`,
      'mcp/github.yaml': 'id: github\nurl: http://127.0.0.1:9/mcp\ncredential: { passthrough: x-github-token }\n',
      'mcp/down.yaml': 'id: down\nurl: http://127.0.0.1:9/mcp\ntimeoutSeconds: 2\n',
    },
  });
  other = await gw.newWorkspace('elsewhere');
  await addUser(gw.services, 'owner@example.com', [[gw.workspace, 'owner']]);
  await addUser(gw.services, 'member@example.com', [[gw.workspace, 'member']]);
  ({ id: keyId, key } = await issueApiKey(gw.services.db, gw.workspace, { name: 'agent', scopes: ['mcp.tools'] }));
});
afterAll(async () => {
  await gw.close();
  await files.close();
});

async function signedIn(email: string): Promise<DashboardClient> {
  const client = new DashboardClient(gw.url);
  expect((await client.signIn(email)).status).toBe(303);
  return client;
}

async function toolsOfKey(apiKey: string): Promise<string[]> {
  const mcp = new Client({ name: 'test-agent', version: '1' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${gw.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }));
  try {
    return (await mcp.listTools()).tools.map((t) => t.name).sort();
  } finally {
    await mcp.close();
  }
}

/** A page's text as a person reads it: entities decoded. */
const shown = (html: string) => html.replace(/&quot;|&#34;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
const cells = (html: string, table: string) => [...(new RegExp(`<table class="${table}">([\\s\\S]*?)</table>`).exec(html)?.[1] ?? '').matchAll(/<td data-label="[^"]+">([\s\S]*?)<\/td>/g)].map((m) => m[1].replace(/<[^>]+>/g, '').trim());

describe('Settings > MCP tools', () => {
  it('lists each server with the tools it lists to the gateway, and says why a server has no list', async () => {
    const client = await signedIn('owner@example.com');
    const page = await client.get('/dashboard/settings/mcp');
    expect(page.status).toBe(200);
    expect(cells(page.html, 'mcp-tools')).toEqual(['big', 'Answers many bytes', '—', 'count', 'Counts to three, reporting progress', 'granted', 'read_file', 'Reads a file', 'granted']);
    expect(page.html).toContain('credential: static key · count: $0.01');
    expect(shown(page.html)).toContain(`listed with each user's own token (the "x-github-token" header)`);
    expect(shown(page.html)).toContain('Tools not listed: MCP server "down" is unreachable');
    expect(cells(page.html, 'mcp-grants')).toEqual(['every workspace (config file)', 'files', 'read_file, count']);
    expect(page.html).not.toContain('files-secret');
  });

  it('grants tools of a server to one key, which then sees only those, audited as the user', async () => {
    expect(await toolsOfKey(key)).toEqual(['files__count', 'files__read_file']);
    const client = await signedIn('owner@example.com');
    await client.get('/dashboard/settings/mcp');
    const granted = await client.post('/dashboard/settings/mcp/grants', { subject: keyId, server: 'files', tools: ['read_file'] });
    expect(granted.status).toBe(201);
    const { prefix } = (await findApiKeyById(gw.services.db, keyId))!;
    expect(cells(granted.html, 'mcp-grants')).toEqual(['every workspace (config file)', 'files', 'read_file, count', `key agent (${prefix}…)`, 'files', 'read_file']);
    expect(await toolsOfKey(key)).toEqual(['files__read_file']);
    const audit = await gw.services.db.selectFrom('audit_log').select(['action', 'actor_kind', 'after']).where('target_id', '=', keyId).execute();
    expect(audit.map((a) => [a.action, a.actor_kind, JSON.parse(a.after!)])).toEqual([['key.mcp_grant', 'user', { server: 'files', tools: ['read_file'] }]]);
  });

  it('removes a grant (htmx answers with nothing to swap in), giving the key its workspace’s tools again', async () => {
    const client = await signedIn('owner@example.com');
    await client.get('/dashboard/settings/mcp');
    const removed = await client.post('/dashboard/settings/mcp/grants/remove', { subject: keyId, server: 'files' }, { headers: { 'hx-request': 'true' } });
    expect(removed.status).toBe(200);
    expect(removed.html).toBe('');
    expect(await toolsOfKey(key)).toEqual(['files__count', 'files__read_file']);
  });

  it('refuses a grant of no tool or on a server the gateway does not serve (400), and one for another workspace’s key (404)', async () => {
    const client = await signedIn('owner@example.com');
    await client.get('/dashboard/settings/mcp');
    const none = await client.post('/dashboard/settings/mcp/grants', { subject: 'workspace', server: 'files' });
    expect(none.status).toBe(400);
    expect(none.html).toContain('tick a tool, or type names or patterns');
    const unknown = await client.post('/dashboard/settings/mcp/grants', { subject: 'workspace', server: 'nowhere', patterns: '*' });
    expect(unknown.status).toBe(400);
    expect(shown(unknown.html)).toContain('no MCP server "nowhere" is served by this gateway');
    const stranger = await issueApiKey(gw.services.db, other, { scopes: ['mcp.tools'] });
    expect((await client.post('/dashboard/settings/mcp/grants', { subject: stranger.id, server: 'files', patterns: '*' })).status).toBe(404);
    expect(await gw.services.db.selectFrom('mcp_grants').selectAll().where('subject_id', '=', stranger.id).execute()).toEqual([]);
  });

  it('refuses a form without its CSRF token', async () => {
    const client = await signedIn('owner@example.com');
    await client.get('/dashboard/settings/mcp');
    expect((await client.post('/dashboard/settings/mcp/grants', { subject: 'workspace', server: 'files', patterns: '*' }, { csrf: null })).status).toBe(403);
  });

  it('is neither linked nor served to members', async () => {
    const member = await signedIn('member@example.com');
    expect((await member.get('/dashboard/files')).html).not.toContain('/dashboard/settings/mcp');
    expect((await member.get('/dashboard/settings/mcp')).status).toBe(403);
    const owner = await signedIn('owner@example.com');
    expect((await owner.get('/dashboard/files')).html).toContain('href="/dashboard/settings/mcp"');
  });
});
