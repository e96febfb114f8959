// The MCP SDK is loaded on the first MCP request, never before (src/mcp/deps.ts, src/endpoints/mcp.ts): a gateway with
// MCP servers configured that serves model calls, Responses requests included, holds none of it; its first tools/list
// loads it. Checked in a child process that records every module it resolves (test/kit/loaded-modules.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installResponses } from './kit/fake-responses.js';
import { FakeUpstream } from './kit/fake-upstream.js';
import { runWatchingModules } from './kit/process.js';

let fake: FakeUpstream;

beforeAll(async () => {
  fake = await FakeUpstream.start();
  installResponses(fake);
});
afterAll(async () => fake.close());

/** MCP SDK modules the child process had loaded after model calls, and after one MCP request more. */
async function sdkModulesLoaded(): Promise<{ afterModelCalls: number; afterMcp: number; mcpStatus: number }> {
  const script = `
    const { startGateway, chatChannel } = await import('./test/kit/gateway.ts');
    const gw = await startGateway({
      channels: { fake: chatChannel('fake', process.argv[1] + '/v1') },
      extraConfig: 'mcp:\\n  grants:\\n    - { workspace: "*", server: files }\\n',
      files: { 'mcp/files.yaml': 'id: files\\nurl: http://127.0.0.1:9/mcp\\ntimeoutSeconds: 2\\n' },
    });
    const headers = { authorization: 'Bearer ' + gw.key };
    const chat = await gw.app.inject({ method: 'POST', url: '/v1/chat/completions', headers, payload: { model: 'fake-chat', messages: [{ role: 'user', content: 'hi' }] } });
    const responses = await gw.app.inject({ method: 'POST', url: '/v1/responses', headers, payload: { model: 'fake-chat', input: 'hi' } });
    if (chat.statusCode !== 200 || responses.statusCode !== 200) throw new Error('status ' + chat.statusCode + ' ' + responses.statusCode);
    const sdk = (urls) => urls.filter((u) => u.includes('@modelcontextprotocol/sdk')).length;
    const afterModelCalls = sdk(await globalThis.loadedModules());
    const mcp = await gw.app.inject({ method: 'POST', url: '/mcp', headers: { ...headers, accept: 'application/json, text/event-stream' }, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    const afterMcp = sdk(await globalThis.loadedModules());
    await gw.close();
    console.log(JSON.stringify({ afterModelCalls, afterMcp, mcpStatus: mcp.statusCode }));
  `;
  return runWatchingModules<{ afterModelCalls: number; afterMcp: number; mcpStatus: number }>(script, fake.url);
}

describe('the MCP SDK', () => {
  it('is not loaded by model calls on a gateway with MCP servers, and is by its first MCP request', { timeout: 60_000 }, async () => {
    const { afterModelCalls, afterMcp, mcpStatus } = await sdkModulesLoaded();
    expect(afterModelCalls).toBe(0);
    expect(mcpStatus).toBe(200);
    expect(afterMcp).toBeGreaterThan(0);
  });
});
