// Counts a Messages request's input tokens locally, with a vendor's BPE encoding (gpt-tokenizer): for channels whose
// upstream has no count endpoint. An approximation: the vendor's own framing tokens and media are estimated.

/** Tokens assumed for an image or a non-text document: Anthropic's documented ceiling for an image of ~1.15 megapixels. */
const MEDIA_TOKENS = 1600;
/** Framing tokens per message (role and separators) and per request. */
const PER_MESSAGE = 4;
const PER_REQUEST = 3;

type Counter = (text: string) => number;

const counters = new Map<string, Promise<Counter>>();

/** The encoding's counter, loaded once on first use (the rank tables are large, so they stay out of startup). */
function counterFor(encoding: string): Promise<Counter> {
  let counter = counters.get(encoding);
  if (!counter) {
    const load: Record<string, () => Promise<{ countTokens: (text: string) => number }>> = {
      o200k_base: () => import('gpt-tokenizer/encoding/o200k_base'),
      cl100k_base: () => import('gpt-tokenizer/encoding/cl100k_base'),
      p50k_base: () => import('gpt-tokenizer/encoding/p50k_base'),
      r50k_base: () => import('gpt-tokenizer/encoding/r50k_base'),
    };
    counter = (load[encoding] ?? load.o200k_base)().then((m) => (text: string) => m.countTokens(text));
    counters.set(encoding, counter);
  }
  return counter;
}

/** The texts of a content value (a string or blocks), and how many media blocks it holds; walked without recursion. */
function collect(value: unknown, texts: string[]): number {
  let media = 0;
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      texts.push(v);
      continue;
    }
    if (!v || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]);
      continue;
    }
    const block = v as Record<string, unknown>;
    const source = block.source as { type?: string; data?: unknown } | undefined;
    switch (block.type) {
      case 'text':
        stack.push(block.text);
        break;
      case 'thinking':
        stack.push(block.thinking);
        break;
      case 'tool_use':
      case 'server_tool_use':
        texts.push(String(block.name ?? ''), JSON.stringify(block.input ?? {}));
        break;
      case 'tool_result':
        stack.push(block.content);
        break;
      case 'image':
        media++;
        break;
      case 'document':
        if (source?.type === 'text' && typeof source.data === 'string') texts.push(source.data);
        else media++;
        break;
      default:
        // Any other block: its JSON, which errs high rather than counting nothing.
        texts.push(JSON.stringify(block));
    }
  }
  return media;
}

/** Input tokens of an Anthropic Messages request (system, messages, tools), counted with `encoding`. */
export async function countMessagesTokens(body: Record<string, unknown>, encoding: string): Promise<number> {
  const count = await counterFor(encoding);
  const texts: string[] = [];
  let media = collect(body.system, texts);
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (const message of messages) media += collect((message as { content?: unknown })?.content, texts);
  if (Array.isArray(body.tools)) for (const tool of body.tools) texts.push(JSON.stringify(tool));
  let tokens = PER_REQUEST + messages.length * PER_MESSAGE + media * MEDIA_TOKENS;
  for (const text of texts) tokens += count(text);
  return tokens;
}
