// What a `restore: true` guardrail redacted from one call's request, kept for that call only: each value gets a
// numbered placeholder (`[REDACTED:email:1]`, the same value the same number) in place of the plain redaction, and the
// placeholders the answer carries are put back as the values, after the answer's own checks (which see placeholders).
// Nothing else keeps the values: a captured answer is stored with them hidden again (hide), and such an answer is never
// cached (another request's placeholders would get this one's values).
import type { RestoreVault } from '../engine/guardrails.js';
import type { Span } from './detectors.js';

const PLACEHOLDER = /\[REDACTED:[a-z0-9_-]{1,32}:[0-9]{1,6}\]/g;
/** The most values one request's vault holds: past it, values are redacted plainly (not restored). */
const MAX_VALUES = 10_000;

export class Vault implements RestoreVault {
  private readonly values = new Map<string, string>();
  private readonly placeholders = new Map<string, string>();

  get size(): number {
    return this.values.size;
  }

  /** The placeholder of `value` found by `detector`, numbered on first sight; undefined past the vault's bound. */
  placeholder(detector: string, value: string): string | undefined {
    const key = `${detector}\0${value}`;
    let placeholder = this.placeholders.get(key);
    if (placeholder === undefined && this.values.size < MAX_VALUES) {
      placeholder = `[REDACTED:${detector}:${this.values.size + 1}]`;
      this.placeholders.set(key, placeholder);
      this.values.set(placeholder, value);
    }
    return placeholder;
  }

  /** The spans of `text` that are this vault's placeholders, each to be replaced by its value. */
  spans(text: string): Span[] {
    const out: Span[] = [];
    if (!this.values.size || !text.includes('[REDACTED:')) return out;
    for (const m of text.matchAll(PLACEHOLDER)) {
      const value = this.values.get(m[0]);
      if (value !== undefined) out.push({ start: m.index, end: m.index + m[0].length, detector: 'restore', replacement: value });
    }
    return out;
  }

  /** `text` with every value put back as its placeholder: as it is written and as JSON escapes it (a captured answer). */
  hide(text: string): string {
    let out = text;
    for (const [placeholder, value] of this.values) {
      out = out.replaceAll(value, placeholder);
      const escaped = JSON.stringify(value).slice(1, -1);
      if (escaped !== value) out = out.replaceAll(escaped, placeholder);
    }
    return out;
  }
}
