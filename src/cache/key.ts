// The cache key of a request: its workspace, its dialect, the route it names and its body, hashed; and, read from the
// body, what makes its answer vary from one call to the next (sampling, tool results, images by URL, server state). A
// body read from JSON is keyed by its own text (the gateway keeps it beside the parse), the members that do not change
// the answer cut out: one native hash of bytes in hand, no walk, unless the text holds a mark of what varies (then the
// parsed body is walked for it, reading only). A body without its text (changed by a guardrail, or never JSON) is keyed
// by a canonical form: members sorted, each string whole behind its length (no escaping), hashed in one native call.
import { hash } from 'node:crypto';
import { withoutTopLevel } from '../http/json-text.js';

/** Top-level members left out of the key: how the answer travels, or who asked, never what it says (docs/caching.md). */
const IGNORED_LIST = ['stream', 'stream_options', 'user', 'metadata', 'store', 'safety_identifier', 'prompt_cache_key'];
export const IGNORED_MEMBERS: ReadonlySet<string> = new Set(IGNORED_LIST);

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

export const URL_MEMBERS: ReadonlySet<string> = new Set(['url', 'image_url', 'file_url']);
export const TOOL_RESULT_TYPES: ReadonlySet<string> = new Set(['tool_result', 'function_call_output', 'custom_tool_call_output', 'computer_call_output', 'mcp_tool_result', 'local_shell_call_output']);

/**
 * What a JSON text must hold somewhere for its body to vary by the rules below: each tool-result type, `tool` and
 * `function` roles and item_reference hold one of these, each URL member's name ends in `url"`, and a `\u` escape could
 * spell any of them. A text without any of them is not walked (test/cache-units.test.ts checks the sets against them).
 */
export const VARIANCE_MARKS: readonly string[] = ['tool', 'function', '_output', 'item_reference', 'url"', '\\u'];

/** Thrown (and caught) inside the walk when a body nests past MAX_DEPTH. */
const TOO_DEEP = Symbol('too deep');

/**
 * A string as the canonical form holds it: its length then itself, which no other string's form can begin with. A lone
 * surrogate would hash as U+FFFD (UTF-8 has no form for it), so a string that has one is written escaped, as JSON.
 */
const piece = (text: string) => ((text as string & { isWellFormed(): boolean }).isWellFormed() ? `s${text.length}:${text}` : `j${JSON.stringify(text)}`);

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
    this.note(object);
    let out = '{';
    for (const name of sortedNames(object)) {
      const item = object[name];
      if (item === undefined || (depth === 0 && IGNORED_MEMBERS.has(name))) continue;
      out += piece(name) + this.value(item, depth + 1, name);
    }
    return `${out}}`;
  }

  /** The same walk reading only what varies (no canonical form made); throws TOO_DEEP past MAX_DEPTH. */
  scan(value: unknown, depth: number, member: string): void {
    if (typeof value === 'string') {
      if (URL_MEMBERS.has(member) && /^https?:/i.test(value)) this.imageUrls = true;
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    if (depth > MAX_DEPTH) throw TOO_DEEP;
    if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i++) this.scan(value[i], depth + 1, member);
      return;
    }
    const object = value as Record<string, unknown>;
    this.note(object);
    for (const name in object) if (depth > 0 || !IGNORED_MEMBERS.has(name)) this.scan(object[name], depth + 1, name);
  }

  /** What one object of the body says: a tool's result, or a reference to a conversation kept upstream. */
  private note(object: Record<string, unknown>): void {
    if (typeof object.type === 'string') {
      if (TOOL_RESULT_TYPES.has(object.type)) this.toolResults = true;
      else if (object.type === 'item_reference') this.conversationState = true;
    }
    if (object.role === 'tool' || object.role === 'function') this.toolResults = true;
  }
}

/** Responses' server-side conversation, named at the top of the body. */
const namesConversation = (body: Record<string, unknown>) => (body.previous_response_id !== undefined && body.previous_response_id !== null) || (body.conversation !== undefined && body.conversation !== null);

/** Whether the parsed body has any of the members left out of the key (each a property read). */
function hasIgnored(body: Record<string, unknown>): boolean {
  for (let i = 0; i < IGNORED_LIST.length; i++) if (body[IGNORED_LIST[i]] !== undefined) return true;
  return false;
}

/**
 * What a request is keyed by and what varies in it: its JSON text (`source`, the text `body` was parsed from) less the
 * members left out, or, without a text, its canonical form (canonicalBody). The two are tagged apart, so a text never
 * hashes as a canonical form. Undefined when the body cannot be keyed (nested past MAX_DEPTH where it had to be walked).
 */
export function keyText(body: Record<string, unknown>, source: string | undefined): Canonical | undefined {
  const text = source === undefined ? undefined : hasIgnored(body) ? withoutTopLevel(source, IGNORED_LIST) : source;
  if (text === undefined) {
    const canonical = canonicalBody(body);
    if (canonical) canonical.text = `c${canonical.text}`;
    return canonical;
  }
  if (!hasMark(text)) return { text: `r${text}`, toolResults: false, imageUrls: false, conversationState: namesConversation(body) };
  const walk = new Walk();
  try {
    walk.scan(body, 0, '');
  } catch (err) {
    if (err === TOO_DEEP) return undefined;
    throw err;
  }
  return { text: `r${text}`, toolResults: walk.toolResults, imageUrls: walk.imageUrls, conversationState: walk.conversationState || namesConversation(body) };
}

function hasMark(text: string): boolean {
  for (let i = 0; i < VARIANCE_MARKS.length; i++) if (text.includes(VARIANCE_MARKS[i])) return true;
  return false;
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
  if (namesConversation(body)) walk.conversationState = true;
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

/** The store key: a hash of the scope (the workspace, unless shared), the dialect, and the canonical body (which names the route). */
export function cacheKey(namespace: string, scope: string, dialect: string, canonical: string): string {
  return `${namespace}:${hash('sha256', `${scope}\n${dialect}\n${canonical}`, 'base64url')}`;
}
