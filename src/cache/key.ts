// The cache key of a request: its workspace, its dialect, the route it names and its body in a canonical form (members
// sorted, stream flags and fields that do not change the answer left out), hashed unless short; and, read in the same
// walk, what makes its answer vary from one call to the next (sampling, tool results, images by URL, server state). The
// canonical form is only ever compared or hashed, so it need not be JSON: each string goes in whole behind its length
// (no escaping, no scan; a JSON escape of a 4 KiB prompt alone cost 13 us), pieces are joined by concatenation. A short
// one keys the memory store as it is; any other is hashed in one native call.
import { hash } from 'node:crypto';

/** Top-level members left out of the key: how the answer travels, or who asked, never what it says (docs/caching.md). */
export const IGNORED_MEMBERS: ReadonlySet<string> = new Set(['stream', 'stream_options', 'user', 'metadata', 'store', 'safety_identifier', 'prompt_cache_key']);

/** Deeper than this, a body is not cached (the walk is bounded; no honest request nests so far). */
const MAX_DEPTH = 64;

/** What the walk found that makes an answer vary between calls. */
export interface Variance {
  toolResults: boolean;
  imageUrls: boolean;
  conversationState: boolean;
}

/** The canonical text of a body and what varies in it; undefined when it nests past MAX_DEPTH. */
export interface Canonical extends Variance {
  text: string;
}

const URL_MEMBERS = new Set(['url', 'image_url', 'file_url']);
const TOOL_RESULT_TYPES = new Set(['tool_result', 'function_call_output', 'custom_tool_call_output', 'computer_call_output', 'mcp_tool_result', 'local_shell_call_output']);

/** Thrown (and caught) inside the walk when a body nests past MAX_DEPTH. */
const TOO_DEEP = Symbol('too deep');

/** A string as the canonical form holds it: its length then itself, which no other string's form can begin with. */
const piece = (text: string) => `s${text.length}:${text}`;

/** An object's own member names in code-unit order: insertion sort for the few members a request object has. */
function sortedNames(object: object): string[] {
  const names = Object.keys(object);
  if (names.length > 16) return names.sort();
  for (let i = 1; i < names.length; i++) {
    const name = names[i];
    let j = i - 1;
    for (; j >= 0 && names[j] > name; j--) names[j + 1] = names[j];
    names[j + 1] = name;
  }
  return names;
}

class Walk implements Variance {
  toolResults = false;
  imageUrls = false;
  conversationState = false;

  /** The canonical form of one value found under `member`; throws TOO_DEEP past MAX_DEPTH. */
  value(value: unknown, depth: number, member: string): string {
    switch (typeof value) {
      case 'string':
        if (URL_MEMBERS.has(member) && /^https?:/i.test(value)) this.imageUrls = true;
        return piece(value);
      case 'number':
        return `n${value};`;
      case 'boolean':
        return value ? 't' : 'f';
      case 'object':
        if (value === null) return 'z';
        break;
      default:
        return 'z';
    }
    if (depth > MAX_DEPTH) throw TOO_DEEP;
    if (Array.isArray(value)) {
      let out = '[';
      for (let i = 0; i < value.length; i++) out += this.value(value[i], depth + 1, member);
      return `${out}]`;
    }
    const object = value as Record<string, unknown>;
    if (typeof object.type === 'string') {
      if (TOOL_RESULT_TYPES.has(object.type)) this.toolResults = true;
      else if (object.type === 'item_reference') this.conversationState = true;
    }
    if (object.role === 'tool' || object.role === 'function') this.toolResults = true;
    let out = '{';
    for (const name of sortedNames(object)) {
      const item = object[name];
      if (item === undefined || (depth === 0 && IGNORED_MEMBERS.has(name))) continue;
      out += piece(name) + this.value(item, depth + 1, name);
    }
    return `${out}}`;
  }
}

/** The canonical form of a request body; undefined when it cannot be keyed (nested too deep). */
export function canonicalBody(body: Record<string, unknown>): Canonical | undefined {
  const walk = new Walk();
  let text: string;
  try {
    text = walk.value(body, 0, '');
  } catch (err) {
    if (err === TOO_DEEP) return undefined;
    throw err;
  }
  if (body.previous_response_id !== undefined && body.previous_response_id !== null) walk.conversationState = true;
  if (body.conversation !== undefined && body.conversation !== null) walk.conversationState = true;
  return { text, toolResults: walk.toolResults, imageUrls: walk.imageUrls, conversationState: walk.conversationState };
}

/**
 * Whether a chat request samples (its answer differs from call to call): a temperature above 0, or none (every chat
 * API's default is above 0), without a seed.
 */
export function samples(body: Record<string, unknown>): boolean {
  if (body.seed !== undefined && body.seed !== null) return false;
  return body.temperature !== 0;
}

/**
 * Canonical texts up to this long key the memory store as they are: hashing one (some 0.8 us hot, measured on a chat
 * request's 120 characters) costs more than the store's own number for it (keyNumber) and the comparison on a hit.
 */
export const RAW_KEY_MAX = 256;

/**
 * The store key of the scope (the workspace, unless shared), the dialect and the canonical body (which names the route):
 * for the memory store and a short body, the three as they are (a key that has line breaks, which no hashed key has);
 * otherwise the namespace and a hash of them. A lone surrogate would hash as U+FFFD (UTF-8 has no form for it), so a
 * text that has one is hashed in its JSON form, which begins with a quote (a scope never does).
 */
export function cacheKey(namespace: string, scope: string, dialect: string, canonical: string, memory = false): string {
  const text = `${scope}\n${dialect}\n${canonical}`;
  if (memory && canonical.length <= RAW_KEY_MAX) return text;
  const whole = (text as string & { isWellFormed(): boolean }).isWellFormed() ? text : JSON.stringify(text);
  return `${namespace}:${hash('sha256', whole, 'base64url')}`;
}
