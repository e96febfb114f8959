// A `limits` guardrail: what one request may hold, checked on the client's body before anything is reserved. Members it
// may not set (a top-level name or a dotted path), tools it may not offer (a function's name, a server tool's type), the
// most images (chat `image_url`, Messages `image`, Responses `input_image` parts), and the longest prompt in tokens as
// the reservation estimates them (the body's JSON bytes / 3, which errs high). The first limit passed decides; a block
// names the guardrail and the limit, and only what the operator's own config says (a forbidden name it lists).
import { jsonBytes, tokensForBytes } from '../billing/estimate.js';
import type { Action, Decision, RequestGuardrail, Stage } from './guardrail.js';

export interface LimitsSpec {
  maxPromptTokens?: number;
  maxImages?: number;
  forbiddenTools?: string[];
  forbiddenParams?: string[];
}

const IMAGE_PARTS = new Set(['image_url', 'image', 'input_image']);
/** Deeper than any request the dialects define. */
const MAX_DEPTH = 24;

/** Image parts of the request, wherever they sit (messages, tool results, Responses input items). */
function imagesIn(node: unknown, depth = 0): number {
  if (!node || typeof node !== 'object' || depth > MAX_DEPTH) return 0;
  let count = !Array.isArray(node) && IMAGE_PARTS.has((node as { type?: unknown }).type as string) ? 1 : 0;
  for (const value of Array.isArray(node) ? node : Object.values(node)) if (value && typeof value === 'object') count += imagesIn(value, depth + 1);
  return count;
}

/** The names of the tools a request offers: a function's name (chat's `function.name`, Responses' and Messages' `name`), else its type. */
function toolNames(body: Record<string, unknown>): string[] {
  const tools = [...(Array.isArray(body.tools) ? body.tools : []), ...(Array.isArray(body.functions) ? body.functions : [])] as Record<string, unknown>[];
  return tools.flatMap((tool) => {
    if (!tool || typeof tool !== 'object') return [];
    const name = (tool.function as { name?: unknown } | undefined)?.name ?? tool.name ?? tool.type;
    return typeof name === 'string' ? [name] : [];
  });
}

const isSet = (body: Record<string, unknown>, path: string[]): boolean => {
  let at: unknown = body;
  for (const key of path) {
    if (!at || typeof at !== 'object' || Array.isArray(at) || !Object.hasOwn(at, key)) return false;
    at = (at as Record<string, unknown>)[key];
  }
  return at !== undefined && at !== null;
};

export class LimitsGuardrail implements RequestGuardrail {
  readonly kind = 'limits';
  private readonly params: { name: string; path: string[] }[];
  private readonly tools: ReadonlySet<string>;

  constructor(
    readonly id: string,
    readonly action: Action,
    readonly stages: ReadonlySet<Stage>,
    private readonly spec: LimitsSpec,
  ) {
    this.params = (spec.forbiddenParams ?? []).map((name) => ({ name, path: name.split('.') }));
    this.tools = new Set(spec.forbiddenTools ?? []);
  }

  checkRequest(body: Record<string, unknown>): Decision {
    const passed = this.firstPassed(body);
    if (!passed) return { verdict: 'pass' };
    return { verdict: this.action === 'flag' ? 'flag' : 'block', matches: { [passed.limit]: 1 }, reason: `limit ${passed.limit}: ${passed.why}` };
  }

  /** The first limit the request passes, and what it says. */
  private firstPassed(body: Record<string, unknown>): { limit: keyof LimitsSpec; why: string } | undefined {
    const param = this.params.find((p) => isSet(body, p.path));
    if (param) return { limit: 'forbiddenParams', why: `"${param.name}" may not be set` };
    if (this.tools.size) {
      const tool = toolNames(body).find((name) => this.tools.has(name));
      if (tool !== undefined) return { limit: 'forbiddenTools', why: `tool "${tool}" may not be offered` };
    }
    const { maxImages, maxPromptTokens } = this.spec;
    if (maxImages !== undefined) {
      const images = imagesIn([body.messages, body.input]);
      if (images > maxImages) return { limit: 'maxImages', why: `${images} images, at most ${maxImages}` };
    }
    if (maxPromptTokens !== undefined) {
      const tokens = tokensForBytes(jsonBytes(body));
      if (tokens > maxPromptTokens) return { limit: 'maxPromptTokens', why: `about ${tokens} tokens, at most ${maxPromptTokens}` };
    }
    return undefined;
  }
}
