// The operator's own regular expressions of a `pattern` guardrail, run by re2js (RE2's linear-time automaton in
// JavaScript): whatever a pattern says, a scan takes time in proportion to the text, so no pattern can stall a process
// by backtracking. A pattern RE2 cannot express (lookaround, backreferences) is a config error at its own place.
import type { RE2JS } from 're2js';
import { requireOnUse } from '../base/load-on-use.js';
import type { Detector, Span } from './detectors.js';

/** re2js (about 260 KiB of source), loaded when the first operator pattern compiles: a config without one never holds it. */
const re2js = requireOnUse<{ RE2JS: typeof RE2JS }>('re2js', 'a pattern guardrail with a regex');

export interface PatternSpec {
  name: string;
  regex: string;
  caseInsensitive: boolean;
}

/** The pattern compiled as a detector, or why it cannot be. */
export function compilePattern(spec: PatternSpec): Detector | { problem: string } {
  const { RE2JS } = re2js();
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(spec.regex, spec.caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (err) {
    return { problem: `not a valid RE2 regular expression: ${(err as Error).message.split('\n')[0]}` };
  }
  if (compiled.matches('')) return { problem: 'the pattern matches the empty text; it would match everywhere' };
  return {
    name: spec.name,
    find(text: string, out: Span[]) {
      const matcher = compiled.matcher(text);
      while (matcher.find()) {
        const start = matcher.start();
        const end = matcher.end();
        if (end > start) out.push({ start, end, detector: spec.name });
      }
    },
  };
}
