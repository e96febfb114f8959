// The cache key of a request: its workspace, its dialect, the route it names and its body in a canonical form (members
// sorted, whitespace gone, stream flags and fields that do not change the answer left out), hashed; and, read in the
// same walk, what makes its answer vary from one call to the next (sampling, tool results, images by URL, server state).
import { createHash } from 'node:crypto';

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

/** Walks one value into `out`, noting what varies; false when it nests too deep. */
function walk(value: unknown, depth: number, out: string[], found: Variance, member: string): boolean {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'string' && URL_MEMBERS.has(member) && /^https?:/i.test(value)) found.imageUrls = true;
    out.push(JSON.stringify(value) ?? 'null');
    return true;
  }
  if (depth > MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i) out.push(',');
      if (!walk(value[i], depth + 1, out, found, member)) return false;
    }
    out.push(']');
    return true;
  }
  const object = value as Record<string, unknown>;
  if (typeof object.type === 'string' && TOOL_RESULT_TYPES.has(object.type)) found.toolResults = true;
  if (object.role === 'tool' || object.role === 'function') found.toolResults = true;
  if (object.type === 'item_reference') found.conversationState = true;
  out.push('{');
  let first = true;
  for (const name of Object.keys(object).sort()) {
    const item = object[name];
    if (item === undefined || (depth === 0 && IGNORED_MEMBERS.has(name))) continue;
    if (!first) out.push(',');
    first = false;
    out.push(JSON.stringify(name), ':');
    if (!walk(item, depth + 1, out, found, name)) return false;
  }
  out.push('}');
  return true;
}

/** The canonical form of a request body; undefined when it cannot be keyed (nested too deep). */
export function canonicalBody(body: Record<string, unknown>): Canonical | undefined {
  const out: string[] = [];
  const found: Variance = { toolResults: false, imageUrls: false, conversationState: false };
  if (!walk(body, 0, out, found, '')) return undefined;
  if (body.previous_response_id !== undefined && body.previous_response_id !== null) found.conversationState = true;
  if (body.conversation !== undefined && body.conversation !== null) found.conversationState = true;
  return { text: out.join(''), ...found };
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
  const hash = createHash('sha256').update(scope).update('\n').update(dialect).update('\n').update(canonical).digest('base64url');
  return `${namespace}:${hash}`;
}
