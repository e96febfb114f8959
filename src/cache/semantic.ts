// The semantic cache (a route's `cache.semantic`, opt-in): a one-message request without tools whose exact key missed is
// embedded by an embeddings model of the gateway's own catalogue (an internal call, billed to the workspace and key like
// any call, its request-log row's route `cache:<route>`), and the nearest earlier request of the same workspace, route
// and dialect whose cosine similarity reaches the route's threshold lends its stored answer. The vectors are held in
// this process (bounded per route, oldest out); the answers they point at are the exact cache's entries, in memory or
// Redis. Never for a conversation of several turns, a request with tools, or anything but text.
import { GatewayError } from '../base/errors.js';
import type { SemanticPolicy } from '../config/cache.js';
import { routesOf } from '../engine/models.js';
import type { Call } from '../pipeline/call.js';

/** Longest text embedded (characters); a longer prompt is not looked up semantically. */
const MAX_TEXT = 8192;

type Part = { type?: unknown; text?: unknown };

/** The text of a content that is a string or text parts only; undefined for anything else (an image, a file, a tool result). */
function textOf(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content) || !content.length) return undefined;
  const parts = content as Part[];
  if (!parts.every((p) => (p.type === 'text' || p.type === 'input_text') && typeof p.text === 'string')) return undefined;
  return parts.map((p) => p.text as string).join('\n');
}

/**
 * The one user message a single-turn request without tools says, with its system text (a different system prompt is a
 * different question); undefined for any other request.
 */
export function singleTurnText(body: Record<string, unknown>): string | undefined {
  if (body.tools !== undefined || body.tool_choice !== undefined || body.previous_response_id !== undefined || body.conversation !== undefined) return undefined;
  let system = typeof body.system === 'string' ? body.system : body.system === undefined ? '' : textOf(body.system);
  if (typeof body.instructions === 'string') system = body.instructions;
  let turns: unknown[];
  if (Array.isArray(body.messages)) turns = body.messages;
  else if (typeof body.input === 'string') turns = [{ role: 'user', content: body.input }];
  else if (Array.isArray(body.input)) turns = body.input;
  else return undefined;
  const leading = turns.filter((m) => (m as { role?: unknown }).role === 'system' || (m as { role?: unknown }).role === 'developer');
  const rest = turns.slice(leading.length);
  if (rest.length !== 1 || (rest[0] as { role?: unknown }).role !== 'user') return undefined;
  const said = textOf((rest[0] as { content?: unknown }).content);
  const preamble = leading.map((m) => textOf((m as { content?: unknown }).content));
  if (said === undefined || system === undefined || preamble.some((p) => p === undefined)) return undefined;
  const text = [system, ...preamble, said].filter(Boolean).join('\n\n');
  return text.length <= MAX_TEXT ? text : undefined;
}

interface Remembered {
  key: string;
  vector: Float32Array;
}

/** Vectors of answered requests by route policy, then by scope (workspace and dialect); each route's list bounded. */
export class SemanticIndex {
  private readonly byPolicy = new WeakMap<SemanticPolicy, Map<string, Remembered[]>>();

  private listOf(policy: SemanticPolicy, scope: string): Remembered[] {
    let scopes = this.byPolicy.get(policy);
    if (!scopes) this.byPolicy.set(policy, (scopes = new Map()));
    let list = scopes.get(scope);
    if (!list) scopes.set(scope, (list = []));
    return list;
  }

  /** The stored request nearest to `vector` at or above the threshold, with its similarity. */
  nearest(policy: SemanticPolicy, scope: string, vector: Float32Array): { key: string; similarity: number } | undefined {
    let best: { key: string; similarity: number } | undefined;
    for (const entry of this.listOf(policy, scope)) {
      const similarity = cosine(entry.vector, vector);
      if (similarity >= policy.threshold && (!best || similarity > best.similarity)) best = { key: entry.key, similarity };
    }
    return best;
  }

  add(policy: SemanticPolicy, scope: string, key: string, vector: Float32Array): void {
    const list = this.listOf(policy, scope);
    const at = list.findIndex((e) => e.key === key);
    if (at >= 0) list.splice(at, 1);
    list.push({ key, vector });
    if (list.length > policy.maxEntries) list.splice(0, list.length - policy.maxEntries);
  }
}

function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return -1;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? dot / Math.sqrt(na * nb) : -1;
}

/**
 * Embeds `text` with the route's embeddings model through the pipeline, billed as the call's own. A cap it does not fit
 * refuses the request (402, as the call itself would be); any other failure is a plain miss (logged).
 */
export async function embed(call: Call, policy: SemanticPolicy, routeId: string, text: string): Promise<Float32Array | undefined> {
  const calls = call.services.internalCalls;
  const kind = routesOf(call.config, policy.model)?.[0]?.model.kind;
  if (!calls || !kind) return undefined;
  try {
    const answer = await calls.run(call, { modelKind: kind, body: { model: policy.model, input: text }, purpose: `cache:${routeId}`.slice(0, 128) }, call.signal);
    const embedding = (answer.body as { data?: { embedding?: unknown }[] } | undefined)?.data?.[0]?.embedding;
    if (answer.status !== 200 || !Array.isArray(embedding) || !embedding.length || !embedding.every((v) => typeof v === 'number')) return undefined;
    return Float32Array.from(embedding as number[]);
  } catch (err) {
    if (err instanceof GatewayError && err.statusCode === 402) throw err;
    // Its code and status only: an upstream's error message may quote the text it was sent.
    const { code, statusCode } = err as { code?: unknown; statusCode?: unknown };
    call.log.warn({ code, status: statusCode }, 'the semantic cache could not embed a request: looked up as a miss');
    return undefined;
  }
}
