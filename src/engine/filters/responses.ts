// Filters the Responses <-> chat mappings need where Liquid alone cannot say it: part text, runs of tool calls, image URLs.
import { clientValue, TranslationError } from '../../base/errors.js';

type Item = Record<string, unknown>;

const TEXT_PARTS = new Set(['input_text', 'output_text', 'text']);
const ASSISTANT_ITEMS = new Set(['reasoning', 'function_call', 'custom_tool_call']);
const TOOL_OUTPUTS = new Set(['function_call_output', 'custom_tool_call_output']);

function turnKind(item: Item): string {
  const type = String(item?.type ?? 'message');
  if (ASSISTANT_ITEMS.has(type) || (type === 'message' && item.role === 'assistant')) return 'assistant';
  return TOOL_OUTPUTS.has(type) ? 'tool' : 'item';
}

/**
 * Signed thinking travels in `encrypted_content` as this prefix and the block's JSON in base64url. Only Anthropic can
 * verify the signature inside, so a forged or edited one is refused upstream; anything without the prefix (OpenAI's own
 * encrypted reasoning) is not this gateway's and is dropped.
 */
const SEALED = 'gw-thinking-1.';
/** The largest sealed block opened (a thinking block is bounded by the model's output; this bounds the client's input). */
const SEALED_LIMIT = 4 * 1024 * 1024;

function sealThinking(block: unknown): string | null {
  const b = (block ?? {}) as Item;
  // A streamed thinking item (type thinking, its text and signature, or the data of a redacted block) seals the same way.
  const redacted = b.type === 'redacted_thinking' || (b.type === 'thinking' && typeof b.data === 'string' && b.data.length > 0);
  const kept = redacted ? { type: 'redacted_thinking', data: b.data } : b.type === 'thinking' ? { type: 'thinking', thinking: b.thinking ?? b.text ?? '', signature: b.signature } : undefined;
  return kept ? SEALED + Buffer.from(JSON.stringify(kept)).toString('base64url') : null;
}

/** One reasoning item for a thinking block (`done`: a finished item; a streamed one is sealed when its block stops). */
export function reasoningItem(block: Item, id: string): Item {
  return {
    id,
    type: 'reasoning',
    summary: typeof block.thinking === 'string' && block.thinking ? [{ type: 'summary_text', text: block.thinking }] : [],
    encrypted_content: sealThinking(block),
  };
}

function openThinking(value: unknown): Item | undefined {
  if (typeof value !== 'string' || !value.startsWith(SEALED) || value.length > SEALED_LIMIT) return undefined;
  let block: Item;
  try {
    block = JSON.parse(Buffer.from(value.slice(SEALED.length), 'base64url').toString('utf8')) as Item;
  } catch {
    return undefined;
  }
  if (block?.type === 'thinking' && typeof block.thinking === 'string' && typeof block.signature === 'string') return { type: 'thinking', thinking: block.thinking, signature: block.signature };
  if (block?.type === 'redacted_thinking' && typeof block.data === 'string') return { type: 'redacted_thinking', data: block.data };
  return undefined;
}

export const filters = {
  /** The text of a string or of a list of text parts (`input_text`, `output_text`); any other part is refused, naming `param`. */
  parts_text: (value: unknown, param: unknown = 'input') => {
    if (typeof value === 'string') return value;
    if (!Array.isArray(value)) return '';
    return (value as Item[])
      .map((part) => {
        if (part.type === 'refusal') return String(part.refusal ?? '');
        if (!TEXT_PARTS.has(String(part.type))) throw new TranslationError(`${clientValue(String(part.type))} parts cannot be sent where the channel takes only text`, String(param));
        return String(part.text ?? '');
      })
      .join('');
  },

  /**
   * Input items in runs: consecutive items of type `type` form one group, every other item is a group of its own. A chat
   * assistant turn carries all its tool calls at once, so a run of `function_call` items becomes one message.
   */
  runs_of: (value: unknown, types: unknown) => {
    if (!Array.isArray(value)) return [];
    const run = new Set(String(types).split('|'));
    const groups: Item[][] = [];
    for (const item of value as Item[]) {
      const last = groups.at(-1);
      if (last && run.has(String(item?.type)) && run.has(String(last[0]?.type))) last.push(item);
      else groups.push([item]);
    }
    return groups;
  },

  /**
   * Input items as Anthropic turns: consecutive assistant-side items (reasoning, assistant messages, function and custom
   * tool calls) are one `assistant` turn, consecutive tool outputs one `tool` turn, anything else a turn of its own
   * (`item`). An assistant turn says whether it carries thinking this gateway signed (`thinking`).
   */
  turns: (value: unknown) => {
    if (!Array.isArray(value)) return [];
    const turns: { kind: string; items: Item[]; thinking?: boolean; item?: Item }[] = [];
    for (const item of value as Item[]) {
      const kind = turnKind(item);
      const last = turns.at(-1);
      if (kind !== 'item' && last?.kind === kind) last.items.push(item);
      else turns.push({ kind, items: [item], item });
      if (kind === 'assistant' && item.type === 'reasoning' && openThinking(item.encrypted_content)) turns.at(-1)!.thinking = true;
    }
    return turns;
  },

  /** Whether a tool call's name is one of the request's custom tools (Responses `type: custom`), whose input is text. */
  custom_tool: (name: unknown, tools: unknown) => Array.isArray(tools) && (tools as Item[]).some((t) => t?.type === 'custom' && t.name === name),

  /** A custom tool's input: the `input` string of the function's arguments (JSON text); arguments cut short stay as they came. */
  custom_input: (args: unknown) => {
    if (typeof args !== 'string') return (args as Item | null)?.input ?? '';
    try {
      const parsed = JSON.parse(args) as Item;
      return typeof parsed?.input === 'string' ? parsed.input : args;
    } catch {
      return args;
    }
  },

  /** A custom tool call's input text as the arguments (JSON text) of the function it crosses as. */
  custom_arguments: (input: unknown) => JSON.stringify({ input: typeof input === 'string' ? input : '' }),

  /** A thinking block, or a streamed thinking item (its text, signature or data), sealed as encrypted_content. */
  seal_thinking: (block: unknown) => sealThinking(block),

  /**
   * The thinking blocks of an Anthropic answer's content as Responses reasoning items (`rs_<key>_<n>`): the thinking text as
   * the summary, the signed block sealed in encrypted_content, so a client that sends the item back sends the block back.
   */
  reasoning_items: (content: unknown, key: unknown) => {
    if (!Array.isArray(content)) return [];
    return (content as Item[])
      .filter((b) => b?.type === 'thinking' || b?.type === 'redacted_thinking')
      .map((b, n) => reasoningItem(b, `rs_${String(key)}_${n}`));
  },

  /** The thinking block a reasoning item's encrypted_content carries, when this gateway sealed it; else nil (dropped). */
  open_thinking: (value: unknown) => openThinking(value) ?? null,

  /**
   * An `input_image` URL the channel may fetch: a data: URL of an image (a workspace file becomes one in the inputs stage),
   * or https on the default port without credentials. Anything else (http, file:, a private port) is refused.
   */
  remote_image_url: (value: unknown) => {
    const text = typeof value === 'string' ? value : '';
    if (/^data:image\/[a-z0-9.+-]+;base64,/i.test(text)) return text;
    let url: URL | undefined;
    try {
      url = new URL(text);
    } catch {
      url = undefined;
    }
    if (!url || url.protocol !== 'https:' || url.port !== '' || url.username || url.password) {
      throw new TranslationError('input_image needs a file_id, an https image_url on the default port without credentials, or a data:image URL', 'input');
    }
    return text;
  },
};
