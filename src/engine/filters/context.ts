// Anthropic context editing (`context_management.edits`) on a channel that has none: what the translation already does is
// accepted, tool-result clearing is done here as Anthropic documents it, and any other edit is refused by name.
import { clientValue, TranslationError } from '../../base/errors.js';

type Block = Record<string, unknown>;
type Message = { role?: unknown; content?: unknown };
interface Threshold {
  type?: unknown;
  value?: unknown;
}
interface ClearToolUses {
  type: string;
  trigger?: Threshold;
  keep?: Threshold;
  clear_at_least?: Threshold;
  exclude_tools?: unknown;
  clear_tool_inputs?: unknown;
}

/** What a cleared tool result says instead (Anthropic replaces it with placeholder text so the model knows it was removed). */
export const CLEARED = '[cleared]';
/** Anthropic's defaults: clear once the prompt passes 100,000 input tokens, keeping the 3 most recent tool uses. */
const DEFAULT_TRIGGER = 100_000;
const DEFAULT_KEEP = 3;
/** Input tokens are estimated here at 4 characters of JSON each (the trigger is a threshold, not a bill). */
const CHARS_PER_TOKEN = 4;

/** Edits the translation already makes: thinking blocks never cross to a chat channel, so clearing them changes nothing. */
const NO_OPS = new Set(['clear_thinking_20251015']);
const CLEAR_TOOL_USES = /^clear_tool_uses_\d{8}$/;

const refuse = (message: string): never => {
  throw new TranslationError(message, 'context_management');
};

const estimate = (value: unknown) => Math.ceil((JSON.stringify(value) ?? '').length / CHARS_PER_TOKEN);

function count(threshold: Threshold | undefined, types: string[], fallback: { type: string; value: number }, name: string): { type: string; value: number } {
  if (threshold === undefined || threshold === null) return fallback;
  if (typeof threshold !== 'object' || !types.includes(String(threshold.type)) || !Number.isSafeInteger(threshold.value) || (threshold.value as number) < 0) {
    return refuse(`context_management ${name} must be {type: ${types.join(' | ')}, value: a count}`);
  }
  return { type: String(threshold.type), value: threshold.value as number };
}

/** Tool uses in order, each with its result (if the conversation has one yet). */
function toolUses(messages: Message[]) {
  const uses: { use: Block; result?: Block }[] = [];
  const byId = new Map<unknown, { use: Block; result?: Block }>();
  for (const m of messages) {
    if (!Array.isArray(m.content)) continue;
    for (const block of m.content as Block[]) {
      if (block?.type === 'tool_use') {
        const entry = { use: block };
        uses.push(entry);
        byId.set(block.id, entry);
      } else if (block?.type === 'tool_result') {
        const entry = byId.get(block.tool_use_id);
        if (entry) entry.result = block;
      }
    }
  }
  return uses;
}

/** What Anthropic reports for an edit it applied (`context_management.applied_edits` on the answer). */
interface AppliedEdit {
  type: string;
  cleared_tool_uses: number;
  cleared_input_tokens: number;
}

/**
 * The messages with the oldest tool results (and, if asked, their inputs) replaced, as `clear_tool_uses_*` does, and
 * what was cleared (undefined when the edit did not trigger or would clear too little).
 */
function clearToolUses(body: Record<string, unknown>, messages: Message[], edit: ClearToolUses): { messages: Message[]; applied?: AppliedEdit } {
  const trigger = count(edit.trigger, ['input_tokens', 'tool_uses'], { type: 'input_tokens', value: DEFAULT_TRIGGER }, 'trigger');
  const keep = count(edit.keep, ['tool_uses'], { type: 'tool_uses', value: DEFAULT_KEEP }, 'keep');
  const atLeast = count(edit.clear_at_least, ['input_tokens'], { type: 'input_tokens', value: 0 }, 'clear_at_least');
  if (edit.exclude_tools !== undefined && (!Array.isArray(edit.exclude_tools) || edit.exclude_tools.some((t) => typeof t !== 'string'))) {
    return refuse('context_management exclude_tools must be a list of tool names');
  }
  const inputs = edit.clear_tool_inputs;
  if (inputs !== undefined && inputs !== null && typeof inputs !== 'boolean' && !(Array.isArray(inputs) && inputs.every((t) => typeof t === 'string'))) {
    return refuse('context_management clear_tool_inputs must be a boolean or a list of tool names');
  }
  const uses = toolUses(messages);
  const size = trigger.type === 'tool_uses' ? uses.length : estimate([body.system, messages, body.tools]);
  if (size <= trigger.value) return { messages };
  const excluded = new Set((edit.exclude_tools as string[] | undefined) ?? []);
  const clearInput = (name: unknown) => inputs === true || (Array.isArray(inputs) && inputs.includes(String(name)));
  const candidates = uses.slice(0, Math.max(0, uses.length - keep.value)).filter((u) => !excluded.has(String(u.use.name)));
  const cleared = candidates.reduce((n, u) => n + estimate(u.result?.content) + (clearInput(u.use.name) ? estimate(u.use.input) : 0), 0);
  if (candidates.length === 0 || cleared < atLeast.value) return { messages };
  const replaced = new Map<Block, Block>();
  for (const u of candidates) {
    if (u.result) replaced.set(u.result, { ...u.result, content: CLEARED });
    if (clearInput(u.use.name)) replaced.set(u.use, { ...u.use, input: {} });
  }
  return {
    messages: messages.map((m) => (Array.isArray(m.content) && (m.content as Block[]).some((b) => replaced.has(b)) ? { ...m, content: (m.content as Block[]).map((b) => replaced.get(b) ?? b) } : m)),
    applied: { type: edit.type, cleared_tool_uses: candidates.length, cleared_input_tokens: cleared },
  };
}

interface Edited {
  messages: Message[];
  /** Null when the request asked for no context management (the answer then says nothing about it). */
  applied: AppliedEdit[] | null;
}

/** Edits applied once per request: the answer reports what the request mapping did (the same body object). */
const edited = new WeakMap<object, Edited>();

function applyEdits(body: unknown): Edited {
  const request = (body ?? {}) as Record<string, unknown>;
  const known = edited.get(request);
  if (known) return known;
  let messages = (Array.isArray(request.messages) ? request.messages : []) as Message[];
  const management = request.context_management as { edits?: unknown } | null | undefined;
  if (management === undefined || management === null) return { messages, applied: null };
  if (typeof management !== 'object' || (management.edits !== undefined && !Array.isArray(management.edits))) return refuse('context_management must be {edits: [...]}');
  const applied: AppliedEdit[] = [];
  for (const edit of (management.edits ?? []) as ClearToolUses[]) {
    const type = String(edit?.type);
    if (NO_OPS.has(type)) continue;
    if (!CLEAR_TOOL_USES.test(type)) {
      refuse(`context_management edit ${clientValue(type)} cannot be applied on this channel: only clear_thinking_20251015 (thinking never crosses) and clear_tool_uses_* (emulated) can`);
    }
    const result = clearToolUses(request, messages, edit);
    messages = result.messages;
    if (result.applied) applied.push(result.applied);
  }
  const done = { messages, applied };
  if (typeof body === 'object' && body !== null) edited.set(body, done);
  return done;
}

export const filters = {
  /**
   * An Anthropic request's messages with its `context_management.edits` applied: `clear_thinking_*` edits are no-ops (a chat
   * channel never gets thinking), `clear_tool_uses_*` clears older tool results; any other edit is refused by name.
   */
  context_edits: (body: unknown) => applyEdits(body).messages,
  /**
   * The answer's `context_management` for that request, as Anthropic reports it: `{applied_edits}` listing each
   * `clear_tool_uses_*` edit that cleared something (`cleared_tool_uses`, `cleared_input_tokens` at 4 characters a token);
   * nil when the request asked for none. Thinking is dropped on every translated request, not by an edit: not listed.
   */
  applied_context_edits: (body: unknown) => {
    const { applied } = applyEdits(body);
    return applied === null ? undefined : { applied_edits: applied };
  },
};
