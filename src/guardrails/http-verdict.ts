// What an `http` guard service answers (docs/guardrails.md, "The http guard protocol"), read strictly: a verdict of
// allow, block or redact; for redact, spans per text (offsets in Unicode code points, as Python's str counts them) or
// whole replacement texts. Anything else is a failed check, and the guardrail's fail mode decides. Labels name what
// matched in the verdict's counts and in `[REDACTED:<label>]`, so only short names pass; never a text or a reason.
import type { Span } from './detectors.js';

/** A label the request log and a redaction may carry: a short name, never text the guard quotes. */
const LABEL = /^[a-z0-9][a-z0-9_-]{0,31}$/;

export type ServiceVerdict =
  | { verdict: 'allow' }
  | { verdict: 'block'; labels: string[] }
  | { verdict: 'redact'; labels: string[]; spans: Map<number, Span[]>; texts: Map<number, string> };

const fail = (why: string): never => {
  throw Object.assign(new Error(`the guard service's answer ${why}`), { code: 'guard_answer_invalid' });
};

/** The UTF-16 offset of each code-point offset of `text` (one past its end included); identity when it has no surrogate pair. */
function unitsOf(text: string): (point: number) => number {
  const length = [...text].length;
  const check = (point: number) => (point <= length ? point : fail('has a span past the end of its text'));
  if (length === text.length) return check;
  const units = [0];
  for (const char of text) units.push(units[units.length - 1] + char.length);
  return (point) => units[check(point)];
}

function labelOf(value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !LABEL.test(value)) fail('has a label that is not a short name ([a-z0-9_-], at most 32)');
  return value as string;
}

/** The redaction spans of each text, in UTF-16 offsets, sorted and merged. */
function spansOf(redactions: unknown, texts: readonly string[], fallback: string): Map<number, Span[]> {
  if (!Array.isArray(redactions)) fail('has redactions that are not a list');
  const byText = new Map<number, Span[]>();
  for (const r of redactions as Record<string, unknown>[]) {
    const { text, start, end } = r ?? {};
    if (!Number.isInteger(text) || (text as number) < 0 || (text as number) >= texts.length) fail('names a text it was not sent');
    if (!Number.isInteger(start) || !Number.isInteger(end) || (start as number) < 0 || (end as number) <= (start as number)) fail('has a span that is not start < end');
    const list = byText.get(text as number) ?? [];
    list.push({ start: start as number, end: end as number, detector: labelOf(r.label, fallback) });
    byText.set(text as number, list);
  }
  for (const [index, spans] of byText) {
    const unit = unitsOf(texts[index]);
    const merged: Span[] = [];
    for (const span of spans.sort((x, y) => x.start - y.start)) {
      const [start, end] = [unit(span.start), unit(span.end)];
      const last = merged[merged.length - 1];
      if (last && start < last.end) last.end = Math.max(last.end, end);
      else merged.push({ start, end, detector: span.detector });
    }
    byText.set(index, merged);
  }
  return byText;
}

/** Whole replacement texts by index (null keeps a text). */
function replacementsOf(value: unknown, texts: readonly string[]): Map<number, string> {
  if (!Array.isArray(value) || value.length !== texts.length) fail('has texts that do not match the texts it was sent, one for one');
  const out = new Map<number, string>();
  (value as unknown[]).forEach((text, i) => {
    if (text === null) return;
    if (typeof text !== 'string') fail('has a text that is neither a string nor null');
    if (text !== texts[i]) out.set(i, text as string);
  });
  return out;
}

/** The service's answer checked against the texts it was sent; throws what is wrong with it. */
export function readServiceVerdict(answer: unknown, texts: readonly string[], fallbackLabel: string): ServiceVerdict {
  if (!answer || typeof answer !== 'object' || Array.isArray(answer)) return fail('is not a JSON object');
  const { verdict, labels, redactions, texts: replaced } = answer as Record<string, unknown>;
  if (labels !== undefined && !Array.isArray(labels)) fail('has labels that are not a list');
  const named = ((labels as unknown[] | undefined) ?? []).map((label) => labelOf(label, fallbackLabel));
  if (verdict === 'allow') return { verdict };
  if (verdict === 'block') return { verdict, labels: named };
  if (verdict !== 'redact') return fail('has no verdict allow, block or redact');
  if (redactions === undefined && replaced === undefined) fail('says redact with neither redactions nor texts');
  const spans = redactions === undefined ? new Map<number, Span[]>() : spansOf(redactions, texts, fallbackLabel);
  return { verdict, labels: named, spans, texts: replaced === undefined ? new Map() : replacementsOf(replaced, texts) };
}
