// One guardrail as it runs: its id, stages and action, and the check that finds spans in a text. Built at load from its
// file (load.ts); a check of a kind that finds spans (`pattern`) is synchronous and never awaits.
import { GatewayError } from '../base/errors.js';
import type { GuardrailVerdict } from '../config/types.js';
import type { Detector, Span } from './detectors.js';

export type Stage = GuardrailVerdict['stage'];
export type Action = 'block' | 'redact' | 'flag';

export interface Guardrail {
  readonly id: string;
  readonly kind: string;
  readonly action: Action;
  readonly stages: ReadonlySet<Stage>;
  /** The spans of `text` this guardrail matches, sorted and merged; empty when none. */
  spans(text: string): Span[];
}

/** A pattern guardrail: its detectors, shipped and the operator's, run over the text one after another. */
export class PatternGuardrail implements Guardrail {
  readonly kind = 'pattern';
  constructor(
    readonly id: string,
    readonly action: Action,
    readonly stages: ReadonlySet<Stage>,
    private readonly detectors: readonly Detector[],
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
 * the guardrail, never what it matched.
 */
export function guardrailBlocked(id: string, stage: Stage): GatewayError {
  const what = stage === 'input' ? 'the request' : 'the answer';
  return new GatewayError('guardrail_blocked', 400, 'invalid_request_error', `${what} was blocked by guardrail "${id}"`, { param: id, extra: { guardrail: id } });
}

export const isGuardrailBlock = (err: unknown): boolean => err instanceof GatewayError && err.code === 'guardrail_blocked';
