// The fake upstream's Responses route for remote MCP tools, after OpenAI's Responses API reference (tools of type `mcp`):
// for each `mcp` tool the upstream itself connects to `server_url` (with `authorization` as a bearer token, and `headers`)
// through the official MCP SDK's client, lists its tools (an `mcp_list_tools` item, filtered by `allowed_tools`), calls
// the scripted tool (an `mcp_call` item, or an `mcp_approval_request` unless `require_approval` is "never"), then answers
// with a message quoting the tool's output. A server it cannot list is a 424, as the reference's upstream answers.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FakeUpstream } from './fake-upstream.js';
import { json } from './fake-upstream.js';

export interface RemoteMcpScript {
  /** The tool the model calls, by server label, with its arguments (a JSON text). */
  call?: { serverLabel: string; name: string; arguments: string };
  /** What the upstream was given and sent, per mcp tool, in order. */
  seen: { serverUrl: string; authorization?: string; headers?: Record<string, string> }[];
}

interface McpTool {
  server_label: string;
  server_url: string;
  authorization?: string;
  headers?: Record<string, string> | null;
  allowed_tools?: string[] | { tool_names?: string[] } | null;
  require_approval?: unknown;
}

const textOf = (result: unknown) =>
  ((result as { content?: { type: string; text?: string }[] }).content ?? [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');

async function connect(tool: McpTool): Promise<Client> {
  const headers: Record<string, string> = { ...(tool.headers ?? {}) };
  if (tool.authorization) headers.authorization = `Bearer ${tool.authorization}`;
  const client = new Client({ name: 'fake-responses-upstream', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(tool.server_url), { requestInit: { headers } }));
  return client;
}

/** The output items of one mcp tool: its listing, and the scripted call when it is this server's. */
async function itemsOf(tool: McpTool, index: number, script: RemoteMcpScript): Promise<Record<string, unknown>[]> {
  const client = await connect(tool);
  try {
    const allowed = Array.isArray(tool.allowed_tools) ? tool.allowed_tools : tool.allowed_tools?.tool_names;
    const tools = (await client.listTools()).tools.filter((t) => !allowed || allowed.includes(t.name));
    const items: Record<string, unknown>[] = [
      { id: `mcpl_${index}`, type: 'mcp_list_tools', server_label: tool.server_label, tools: tools.map((t) => ({ name: t.name, description: t.description ?? null, input_schema: t.inputSchema, annotations: t.annotations ?? null })) },
    ];
    const call = script.call?.serverLabel === tool.server_label && tools.some((t) => t.name === script.call!.name) ? script.call : undefined;
    if (!call) return items;
    if (tool.require_approval !== 'never') {
      items.push({ id: `mcpr_${index}`, type: 'mcp_approval_request', server_label: tool.server_label, name: call.name, arguments: call.arguments });
      return items;
    }
    try {
      const result = await client.callTool({ name: call.name, arguments: JSON.parse(call.arguments) as Record<string, unknown> });
      const failed = result.isError === true;
      items.push({ id: `mcp_${index}`, type: 'mcp_call', server_label: tool.server_label, name: call.name, arguments: call.arguments, output: failed ? null : textOf(result), error: failed ? textOf(result) : null, approval_request_id: null, status: failed ? 'failed' : 'completed' });
    } catch (err) {
      items.push({ id: `mcp_${index}`, type: 'mcp_call', server_label: tool.server_label, name: call.name, arguments: call.arguments, output: null, error: (err as Error).message, approval_request_id: null, status: 'failed' });
    }
    return items;
  } finally {
    await client.close();
  }
}

export function installRemoteMcpResponses(fake: FakeUpstream): RemoteMcpScript {
  const script: RemoteMcpScript = { seen: [] };
  fake.route(async (req, res) => {
    const body = req.body ?? {};
    const tools = (Array.isArray(body.tools) ? body.tools : []).filter((t: { type?: string }) => t.type === 'mcp') as McpTool[];
    if (req.method !== 'POST' || !req.path.endsWith('/responses') || !tools.length) return false;
    const output: Record<string, unknown>[] = [];
    for (const [index, tool] of tools.entries()) {
      script.seen.push({ serverUrl: tool.server_url, authorization: tool.authorization, headers: tool.headers ?? undefined });
      try {
        output.push(...(await itemsOf(tool, index, script)));
      } catch (err) {
        json(res, 424, { error: { message: `Error retrieving tool list from MCP server: '${tool.server_label}'. ${(err as Error).message}`, type: 'external_connector_error', param: 'tools', code: 'http_error' } });
        return true;
      }
    }
    const said = output.filter((item) => item.type === 'mcp_call').map((item) => item.output ?? item.error);
    output.push({ id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: said.length ? `The tool said: ${said.join('; ')}` : 'No tool was called.', annotations: [] }] });
    const usage = { input_tokens: 20, output_tokens: 8, total_tokens: 28, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 0 } };
    // The tools are echoed as the reference's response object does, without the write-only authorization.
    const echoed = (body.tools as Record<string, unknown>[]).map(({ authorization: _, ...tool }) => tool);
    json(res, 200, { id: 'resp_mcp_1', object: 'response', created_at: 1_700_000_000, model: body.model, status: 'completed', output, tools: echoed, usage });
    return true;
  });
  return script;
}
