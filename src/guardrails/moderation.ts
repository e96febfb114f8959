// A `moderation` guardrail: the request's text sent to a moderation model of the gateway's own catalogue, as an internal
// call billed to the workspace like any call (charged whatever the verdict), and judged by category: a score at or above
// the category's threshold (`thresholds`, `"*"` or `threshold` for the rest) matches; with no threshold set, the
// model's own `flagged` categories do. At input (the request's texts) and at output (a whole answer's texts, awaited
// before the answer goes out; a blocking one refuses requests that ask to stream).
import type { CheckContext } from '../engine/guardrails.js';
import { bounded, type Bounds } from './bounded.js';
import type { Action, AnswerCallResult, CallingAnswerGuardrail, Decision, RequestGuardrail, Stage } from './guardrail.js';
import { textsOf } from './text.js';

export interface ModerationSpec {
  model: string;
  /** Category to the score at or above which it matches; `*` for any category not named. */
  thresholds: Readonly<Record<string, number>>;
  /** The score for every category `thresholds` does not name. */
  threshold?: number;
}

type Result = { categories?: Record<string, unknown>; category_scores?: Record<string, unknown> };

/** The categories of a moderation answer (OpenAI's shape: `results[]` with `categories` and `category_scores`) that match `spec`. */
export function matchedCategories(answer: unknown, spec: ModerationSpec): Record<string, number> | undefined {
  const results = (answer as { results?: unknown } | null)?.results;
  if (!Array.isArray(results) || !results.length) throw new Error('the moderation answer has no results');
  const judged = Object.keys(spec.thresholds).length > 0 || spec.threshold !== undefined;
  const matches: Record<string, number> = {};
  for (const result of results as Result[]) {
    if (judged) {
      for (const [category, score] of Object.entries(result.category_scores ?? {})) {
        const threshold = spec.thresholds[category] ?? spec.thresholds['*'] ?? spec.threshold;
        if (threshold !== undefined && typeof score === 'number' && score >= threshold) matches[category] = (matches[category] ?? 0) + 1;
      }
    } else {
      for (const [category, flagged] of Object.entries(result.categories ?? {})) if (flagged === true) matches[category] = (matches[category] ?? 0) + 1;
    }
  }
  return Object.keys(matches).length ? matches : undefined;
}

export class ModerationGuardrail implements RequestGuardrail, CallingAnswerGuardrail {
  readonly kind = 'moderation';
  readonly refusesStreams: boolean;

  constructor(
    readonly id: string,
    readonly action: Action,
    readonly stages: ReadonlySet<Stage>,
    private readonly bounds: Bounds,
    private readonly spec: ModerationSpec,
  ) {
    this.refusesStreams = stages.has('output') && action === 'block';
  }

  checkRequest(body: Record<string, unknown>, context: CheckContext): Decision | Promise<Decision> {
    return this.judge(textsOf(body), context);
  }

  async checkAnswerByCall(answer: unknown, context: CheckContext): Promise<AnswerCallResult> {
    return { decision: await this.judge(textsOf(answer), context), answer };
  }

  /** The texts sent as one input to the moderation model, judged by category. */
  private judge(texts: string[], context: CheckContext): Decision | Promise<Decision> {
    if (!texts.length) return { verdict: 'pass' };
    return bounded(this.bounds, context, async (signal) => {
      const request = { modelKind: 'moderation', body: { model: this.spec.model, input: texts.join('\n\n') }, purpose: `guardrail:${this.id}` };
      const answer = await context.internalCall(request, signal);
      if (answer.status !== 200) throw Object.assign(new Error('the moderation call failed'), { code: `status_${answer.status}` });
      const matches = matchedCategories(answer.body, this.spec);
      if (!matches) return { verdict: 'pass' };
      return { verdict: this.action === 'flag' ? 'flag' : 'block', matches };
    });
  }
}
