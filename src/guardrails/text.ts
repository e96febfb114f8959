// The text of a request or an answer, as guardrails see it: every string under a member that carries words (a message's
// `content`, a part's `text`, Responses' `input` and `instructions`, embeddings' `input`, a tool call's `arguments`, ...)
// in any of the chat dialects; ids, roles, model names, URLs and base64 media are not text. Generic: no dialect named.
import type { Span } from './detectors.js';

export const TEXT_KEYS = new Set(['content', 'text', 'input', 'instructions', 'system', 'prompt', 'query', 'documents', 'arguments', 'output', 'output_text', 'refusal', 'thinking', 'delta', 'partial_json', 'transcript', 'word']);
/** Deeper than any request the dialects define; a body nested further is not walked past it. */
const MAX_DEPTH = 24;

/** What a walk does with one text: undefined keeps it, a string takes its place. */
export type TextVisitor = (text: string) => string | undefined;

/**
 * Visits every text of `node`. In place (`copy` false), a changed text is written back into its parent; with `copy`,
 * changed branches are copied and the rest shared. Returns the node, or its changed copy.
 */
export function walkTexts(node: unknown, visit: TextVisitor, copy: boolean, inText = false, depth = 0): unknown {
  if (typeof node === 'string') return inText ? (visit(node) ?? node) : node;
  if (!node || typeof node !== 'object' || depth > MAX_DEPTH) return node;
  // Indexes and own keys walked as they are (no list of entries made): a request with nothing to change allocates nothing here.
  if (Array.isArray(node)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < node.length; i++) {
      const value: unknown = node[i];
      if (value === null || (typeof value !== 'object' && (typeof value !== 'string' || !inText))) continue;
      const next = walkTexts(value, visit, copy, inText, depth + 1);
      if (next === value) continue;
      out ??= copy ? [...node] : node;
      out[i] = next;
    }
    return out ?? node;
  }
  let out: Record<string, unknown> | undefined;
  const object = node as Record<string, unknown>;
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const value = object[key];
    const text = TEXT_KEYS.has(key);
    if (value === null || (typeof value !== 'object' && (typeof value !== 'string' || !text))) continue;
    const next = walkTexts(value, visit, copy, text, depth + 1);
    if (next === value) continue;
    out ??= copy ? { ...object } : object;
    out[key] = next;
  }
  return out ?? node;
}

/** The text with each (merged, sorted) span replaced by its replacement, else `[REDACTED:<detector>]`. */
export function redactSpans(text: string, spans: Span[]): string {
  let out = '';
  let at = 0;
  for (const span of spans) {
    out += text.slice(at, span.start) + (span.replacement ?? `[REDACTED:${span.detector}]`);
    at = span.end;
  }
  return out + text.slice(at);
}

/** Matches by detector name, for a verdict. */
export function countByDetector(spans: Span[], into: Record<string, number> = {}): Record<string, number> {
  for (const span of spans) into[span.detector] = (into[span.detector] ?? 0) + 1;
  return into;
}

/** Every text of `node`, in the order a walk visits them (the order `replaceTexts` takes them back in). */
export function textsOf(node: unknown): string[] {
  const texts: string[] = [];
  walkTexts(node, (text) => void texts.push(text), false);
  return texts;
}

/** Writes `replace(text, index)` back in place of each text of `node`, in textsOf's order; undefined keeps a text. */
export function replaceTexts(node: unknown, replace: (text: string, index: number) => string | undefined): void {
  let index = 0;
  walkTexts(node, (text) => replace(text, index++), false);
}
