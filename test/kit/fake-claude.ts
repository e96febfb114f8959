// A stricter fake Anthropic Messages route for agent loops: it enforces the documented rules a translation can break, and
// answers from a turn script. Rules (Anthropic's Messages reference and extended-thinking / structured-outputs guides;
// https://platform.claude.com/docs/en/build-with-claude/adaptive-thinking):
// - max_tokens above thinking.budget_tokens; with thinking on, temperature only 1 and no forced tool_choice (any, tool);
// - a model that thinks adaptively refuses a budget (`thinking.type: enabled`), and only such a model takes
//   `thinking.type: adaptive`; output_config.effort is one of low, medium, high, xhigh, max;
// - with thinking on, a request continuing a tool loop (its last user turn holds tool_result blocks) needs the assistant
//   turn before it to start with a thinking or redacted_thinking block, whose signature must be one this fake issued;
// - output_config.format and strict tools only on a model that takes structured outputs, with every object schema closed
//   (additionalProperties: false); every tool input_schema an object;
// - every tool_result answers a tool_use of the assistant turn just before it.
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { json, writeSse, type RecordedRequest } from './fake-http.js';
import type { FakeUpstream } from './fake-upstream.js';

type Block = Record<string, any>;

/** What the fake answers one request with: content blocks (thinking blocks are signed here) and a stop reason. */
export type ClaudeTurn = (req: Record<string, any>) => { content: Block[]; stop_reason?: string };

export interface FakeClaude {
  /** Upstream model ids that take structured outputs. */
  structured: Set<string>;
  /** Upstream model ids that think adaptively: they refuse a thinking budget. */
  adaptive: Set<string>;
  /** The answer to the next requests (default: text "Hello from Claude."). */
  turn: ClaudeTurn;
  /** Requests refused, with why (a test asserts there are none). */
  refusals: string[];
  usage: { input_tokens: number; output_tokens: number };
}

export const sign = (thinking: string) => `sig-${createHash('sha256').update(thinking).digest('hex').slice(0, 16)}`;

const fail = (res: ServerResponse, claude: FakeClaude, message: string) => {
  claude.refusals.push(message);
  json(res, 400, { type: 'error', error: { type: 'invalid_request_error', message } });
  return true;
};

function closedSchemas(schema: any, where: string): string | undefined {
  if (!schema || typeof schema !== 'object') return undefined;
  if (schema.type === 'object' && schema.additionalProperties !== false) return `${where}: additionalProperties must be false for structured outputs`;
  for (const [name, sub] of Object.entries(schema.properties ?? {})) {
    const bad = closedSchemas(sub, `${where}.${name}`);
    if (bad) return bad;
  }
  return schema.items ? closedSchemas(schema.items, `${where}[]`) : undefined;
}

function check(body: Record<string, any>, claude: FakeClaude): string | undefined {
  const thinking = body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive';
  if (!Number.isInteger(body.max_tokens)) return 'max_tokens: Field required';
  const adaptive = claude.adaptive.has(body.model);
  if (adaptive && body.thinking?.type === 'enabled') return '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.';
  if (!adaptive && body.thinking?.type === 'adaptive') return `thinking.type: adaptive thinking is not supported on model ${body.model}`;
  const effort = body.output_config?.effort;
  if (effort !== undefined && !['low', 'medium', 'high', 'xhigh', 'max'].includes(effort)) return `output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'`;
  if (body.thinking?.type === 'enabled' && !(body.max_tokens > body.thinking.budget_tokens)) return '`max_tokens` must be greater than `thinking.budget_tokens`';
  if (thinking && body.temperature !== undefined && body.temperature !== 1) return '`temperature` may only be set to 1 when thinking is enabled';
  if (thinking && (body.tool_choice?.type === 'any' || body.tool_choice?.type === 'tool')) return 'Thinking may not be enabled when tool_choice forces tool use.';
  const structured = claude.structured.has(body.model);
  if (body.output_config?.format) {
    if (!structured) return `output_config.format: model ${body.model} does not support structured outputs`;
    const bad = closedSchemas(body.output_config.format.schema, 'output_config.format.schema');
    if (bad) return bad;
  }
  for (const tool of body.tools ?? []) {
    if (tool.input_schema?.type !== 'object') return `tools.${tool.name}.input_schema: type must be object`;
    if (tool.strict && !structured) return `tools.${tool.name}.strict: model ${body.model} does not support strict tools`;
    const bad = tool.strict ? closedSchemas(tool.input_schema, `tools.${tool.name}.input_schema`) : undefined;
    if (bad) return bad;
  }
  const messages: { role: string; content: any }[] = body.messages ?? [];
  for (let i = 0; i < messages.length; i++) {
    const content = Array.isArray(messages[i].content) ? messages[i].content : [];
    const results = content.filter((b: Block) => b.type === 'tool_result');
    if (!results.length) continue;
    const before = messages[i - 1];
    const uses = new Set((Array.isArray(before?.content) ? before.content : []).filter((b: Block) => b.type === 'tool_use').map((b: Block) => b.id));
    for (const r of results) if (!uses.has(r.tool_use_id)) return `messages.${i}: unexpected tool_use_id ${r.tool_use_id} in tool_result blocks: each tool_result must answer a tool_use of the previous message`;
    if (thinking && i === messages.length - 1) {
      const first = before.content[0];
      if (first?.type !== 'thinking' && first?.type !== 'redacted_thinking') {
        return `messages.${i - 1}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first?.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`;
      }
      if (first.type === 'thinking' && first.signature !== sign(first.thinking)) return `messages.${i - 1}.content.0: Invalid \`signature\` in \`thinking\` block`;
    }
  }
  return undefined;
}

/** The answer's blocks: thinking signed, and left out unless thinking is on (a model does not think unasked). */
function answerOf(body: Record<string, any>, claude: FakeClaude): { content: Block[]; stop_reason: string } {
  const turn = claude.turn(body);
  const thinking = body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive';
  const content = turn.content.filter((b) => thinking || b.type !== 'thinking').map((b) => (b.type === 'thinking' ? { ...b, signature: sign(b.thinking) } : b));
  return { content, stop_reason: turn.stop_reason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn') };
}

function events(id: string, model: string, content: Block[], stop: string, usage: FakeClaude['usage']) {
  const out: { event: string; data: unknown }[] = [
    { event: 'message_start', data: { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: usage.input_tokens, output_tokens: 1 } } } },
  ];
  content.forEach((block, index) => {
    const start = block.type === 'text' ? { type: 'text', text: '' } : block.type === 'thinking' ? { type: 'thinking', thinking: '' } : { ...block, input: {} };
    out.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: start } });
    const delta = (d: Block) => out.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: d } });
    if (block.type === 'text') for (const piece of block.text.match(/.{1,7}/gs) ?? []) delta({ type: 'text_delta', text: piece });
    if (block.type === 'thinking') {
      for (const piece of block.thinking.match(/.{1,7}/gs) ?? []) delta({ type: 'thinking_delta', thinking: piece });
      delta({ type: 'signature_delta', signature: block.signature });
    }
    if (block.type === 'tool_use') for (const piece of JSON.stringify(block.input).match(/.{1,9}/gs) ?? []) delta({ type: 'input_json_delta', partial_json: piece });
    out.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  out.push({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } } });
  out.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return out;
}

/** Installs the strict route on `fake` for POST .../messages (before the lenient built-in one). */
export function installClaude(fake: FakeUpstream): FakeClaude {
  const claude: FakeClaude = { structured: new Set(), adaptive: new Set(), turn: () => ({ content: [{ type: 'text', text: 'Hello from Claude.' }] }), refusals: [], usage: { input_tokens: 40, output_tokens: 12 } };
  fake.route(async (req: RecordedRequest, res) => {
    if (req.method === 'POST' && req.path.endsWith('/messages/count_tokens')) {
      json(res, 200, { input_tokens: claude.usage.input_tokens });
      return true;
    }
    if (req.method !== 'POST' || !req.path.endsWith('/messages')) return false;
    const body = req.body ?? {};
    const problem = check(body, claude);
    if (problem) return fail(res, claude, problem);
    const { content, stop_reason } = answerOf(body, claude);
    const id = `msg_${claude.refusals.length}_${Date.now()}`;
    if (!body.stream) {
      json(res, 200, { id, type: 'message', role: 'assistant', model: body.model, content, stop_reason, stop_sequence: null, usage: claude.usage });
      return true;
    }
    await writeSse(res, events(id, body.model, content, stop_reason, claude.usage));
    return true;
  });
  return claude;
}
