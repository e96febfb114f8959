// One guardrail as it runs: its id, stages and action, and its check. Built at load from its file (load.ts). A check
// either finds spans in each text of a stage (`pattern`: synchronous, run inside one walk of the body with the others
// of its kind), or judges a whole request (`moderation`, `http`, `limits`) or a whole answer (`schema`) and returns a
// decision; a check that calls out (moderation, http) runs under its deadline and fail mode (bounded.ts).
import { GatewayError } from '../base/errors.js';
import type { CheckContext, GuardrailVerdict } from '../engine/guardrails.js';
import type { Detector, Span } from './detectors.js';

export type Stage = GuardrailVerdict['stage'];
export type Action = 'block' | 'redact' | 'flag';

interface GuardrailBase {
  readonly id: string;
  readonly kind: string;
  readonly action: Action;
  readonly stages: ReadonlySet<Stage>;
}

/** What a whole-request or whole-answer check decided; never the text it judged. */
export interface Decision {
  verdict: GuardrailVerdict['verdict'];
  /** Counts by what matched (a detector, a category, a limit's name). */
  matches?: Record<string, number>;
  /** Set when the check could not run to its end (its deadline passed, its service failed) and the fail mode decided. */
  failed?: GuardrailVerdict['failed'];
  /** What a block tells the client besides the guardrail's name, written from the operator's config only (a limit's name). */
  reason?: string;
}

/** Finds spans in one text at a time (pattern): every stage, redact as well as block and flag. */
export interface SpanGuardrail extends GuardrailBase {
  /** The spans of `text` this guardrail matches, sorted and merged; empty when none. */
  spans(text: string): Span[];
  /** Redacted input values come back in the answer (restore.ts): numbered placeholders instead of plain redactions. */
  readonly restore?: boolean;
}

/** Judges a client's whole request before the upstream sees it (moderation, http, limits); may redact it in place. */
export interface RequestGuardrail extends GuardrailBase {
  checkRequest(body: Record<string, unknown>, context: CheckContext): Decision | Promise<Decision>;
}

/** Judges a whole (not streamed) answer as the client will get it (schema). */
export interface AnswerGuardrail extends GuardrailBase {
  checkAnswer(answer: unknown, dialect: string): Decision;
  /** True when a streamed answer, which it cannot check before it goes out, must be refused at input (`stream: true`). */
  readonly refusesStreams?: boolean;
}

/** What a check that calls out made of a whole answer: its decision, and the answer as it goes on (a redacted copy, or the same). */
export interface AnswerCallResult {
  decision: Decision;
  answer: unknown;
}

/**
 * Judges a whole (not streamed) answer by calling out (moderation, http), under its deadline and fail mode; an http
 * guard's redactions apply to a copy. Its stage's checks are awaited before the answer goes out.
 */
export interface CallingAnswerGuardrail extends GuardrailBase {
  checkAnswerByCall(answer: unknown, context: CheckContext): Promise<AnswerCallResult>;
  /** True when a streamed answer, which it cannot check before it goes out, must be refused at input (`stream: true`). */
  readonly refusesStreams?: boolean;
}

export type Guardrail = SpanGuardrail | RequestGuardrail | AnswerGuardrail | CallingAnswerGuardrail;

export const findsSpans = (g: Guardrail): g is SpanGuardrail => 'spans' in g;
export const checksRequests = (g: Guardrail): g is RequestGuardrail => 'checkRequest' in g;
export const checksAnswers = (g: Guardrail): g is AnswerGuardrail => 'checkAnswer' in g;
export const callsOnAnswers = (g: Guardrail): g is CallingAnswerGuardrail => 'checkAnswerByCall' in g;

/** A pattern guardrail: its detectors, shipped and the operator's, run over the text one after another. */
export class PatternGuardrail implements SpanGuardrail {
  readonly kind = 'pattern';
  constructor(
    readonly id: string,
    readonly action: Action,
    readonly stages: ReadonlySet<Stage>,
    private readonly detectors: readonly Detector[],
    readonly restore = false,
  ) {}

  spans(text: string): Span[] {
    const out: Span[] = [];
    for (const detector of this.detectors) detector.find(text, out);
    if (out.length < 2) return out;
    out.sort((a, b) => a.start - b.start || b.end - a.end);
    const merged: Span[] = [out[0]];
    for (let i = 1; i < out.length; i++) {
      const last = merged[merged.length - 1];
      if (out[i].start < last.end) merged[merged.length - 1] = { ...last, end: Math.max(last.end, out[i].end) };
      else merged.push(out[i]);
    }
    return merged;
  }
}

/**
 * What a client gets when a guardrail blocks: 400 `guardrail_blocked` (its input refused; a stream's error event) naming
 * the guardrail and, where the guardrail says one, the reason its config gives (a limit), never what it matched.
 */
export function guardrailBlocked(id: string, stage: Stage, reason?: string): GatewayError {
  const what = stage === 'input' ? 'the request' : 'the answer';
  return new GatewayError('guardrail_blocked', 400, 'invalid_request_error', `${what} was blocked by guardrail "${id}"${reason ? `: ${reason}` : ''}`, { param: id, extra: { guardrail: id } });
}

export const isGuardrailBlock = (err: unknown): boolean => err instanceof GatewayError && err.code === 'guardrail_blocked';
