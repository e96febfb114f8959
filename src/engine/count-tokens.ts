// Counts a Messages request's input tokens locally, with a vendor's BPE encoding (gpt-tokenizer): for channels whose
// upstream has no count endpoint. An approximation: the vendor's own framing tokens and media are estimated. Bounded per
// request: the tokenizer's BPE costs the square of one pre-token's length, so text reaches it in pieces whose runs of
// letters are at most MAX_RUN characters long; counting yields to the event loop every SLICE_MS, and past BUDGET_MS of counting work the rest
// of the text is extrapolated at the rate counted so far.
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';

/** Tokens assumed for an image or a non-text document: Anthropic's documented ceiling for an image of ~1.15 megapixels. */
const MEDIA_TOKENS = 1600;
/** Framing tokens per message (role and separators) and per request. */
const PER_MESSAGE = 4;
const PER_REQUEST = 3;

/** The longest run of letters (or of spaces) handed to the tokenizer: a longer word is cut. */
export const MAX_RUN = 32;
/** About how long a piece of ordinary text grows before it is handed to the tokenizer (one call costs a few microseconds). */
export const MAX_PIECE = 256;
/** Counting work between two yields to the event loop, so other requests are served meanwhile. */
const SLICE_MS = 10;
/** Counting work one request may take: past it, the rest of its text is extrapolated. */
export const BUDGET_MS = 1000;
/** Special-token spellings (`<|endoftext|>`) in client text are counted as text, never refused. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };

type Counter = (text: string) => number;

const counters = new Map<string, Promise<Counter>>();

/** The encoding's counter, loaded once on first use (the rank tables are large, so they stay out of startup). */
function counterFor(encoding: string): Promise<Counter> {
  let counter = counters.get(encoding);
  if (!counter) {
    const load: Record<string, () => Promise<{ countTokens: (text: string, options: typeof AS_TEXT) => number }>> = {
      o200k_base: () => import('gpt-tokenizer/encoding/o200k_base'),
      cl100k_base: () => import('gpt-tokenizer/encoding/cl100k_base'),
      p50k_base: () => import('gpt-tokenizer/encoding/p50k_base'),
      r50k_base: () => import('gpt-tokenizer/encoding/r50k_base'),
    };
    counter = (load[encoding] ?? load.o200k_base)().then((m) => (text: string) => m.countTokens(text, AS_TEXT));
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

const isSpace = (code: number) => code === 32 || (code >= 9 && code <= 13);
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/**
 * `text` in pieces for the tokenizer: a run of letters (or of spaces) longer than MAX_RUN characters is cut, never inside
 * a surrogate pair; and a piece grown past MAX_PIECE ends before the space that leads its next word (a word keeps its
 * leading space, as the tokenizer's own pre-tokens do, so ordinary text counts as it would whole).
 */
export function* textPieces(text: string): Generator<string> {
  let start = 0;
  /** Where the piece may end: before the space that leads the latest word. */
  let cut = -1;
  let run = 0;
  let spaced = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const space = isSpace(code);
    if (i > start && space !== spaced) {
      run = 0;
      if (!space && i - 1 > start) cut = i - 1;
    }
    spaced = space;
    run++;
    if (run > MAX_RUN && !isLowSurrogate(code)) {
      yield text.slice(start, i);
      start = i;
      run = 1;
      cut = -1;
    } else if (i - start >= MAX_PIECE && cut > start) {
      yield text.slice(start, cut);
      start = cut;
      cut = -1;
    }
  }
  if (start < text.length) yield start ? text.slice(start) : text;
}

/** Counts texts piece by piece within the request's budget, yielding between slices; the rest is extrapolated. */
async function countTexts(texts: string[], count: Counter, limits: CountLimits): Promise<{ tokens: number; extrapolated: boolean }> {
  const { signal, budgetMs = BUDGET_MS } = limits;
  let tokens = 0;
  let counted = 0;
  let spent = 0;
  let sliceStart = performance.now();
  for (const text of texts) {
    for (const piece of textPieces(text)) {
      const now = performance.now();
      if (now - sliceStart >= SLICE_MS) {
        spent += now - sliceStart;
        if (spent >= budgetMs) {
          const total = texts.reduce((sum, t) => sum + t.length, 0);
          return { tokens: tokens + Math.ceil(((total - counted) * tokens) / Math.max(1, counted)), extrapolated: true };
        }
        await yieldToEventLoop();
        signal?.throwIfAborted();
        sliceStart = performance.now();
      }
      tokens += count(piece);
      counted += piece.length;
    }
  }
  return { tokens, extrapolated: false };
}

export interface CountLimits {
  /** The client hanging up: stops the counting. */
  signal?: AbortSignal;
  /** Counting work allowed (default BUDGET_MS). */
  budgetMs?: number;
}

/**
 * Input tokens of an Anthropic Messages request (system, messages, tools), counted with `encoding`; `extrapolated` when
 * the counting budget ran out before the end of the text.
 */
export async function countMessagesTokens(body: Record<string, unknown>, encoding: string, limits: CountLimits = {}): Promise<{ tokens: number; extrapolated: boolean }> {
  const count = await counterFor(encoding);
  const texts: string[] = [];
  let media = collect(body.system, texts);
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (const message of messages) media += collect((message as { content?: unknown })?.content, texts);
  if (Array.isArray(body.tools)) for (const tool of body.tools) texts.push(JSON.stringify(tool));
  const counted = await countTexts(texts, count, limits);
  return { tokens: PER_REQUEST + messages.length * PER_MESSAGE + media * MEDIA_TOKENS + counted.tokens, extrapolated: counted.extrapolated };
}
