// A streamed answer checked as it passes: the text of each delta (any member under a `delta`: chat's content, a Messages
// text_delta, a Responses output_text delta) joins a window per place in the event, of which the last `holdChars` are held
// back so that a match spanning two events is seen whole before any of it goes out. A `block` ends the stream with the
// dialect's error event (the client has seen the text released before the window); `redact` replaces spans in the text
// released; held text goes out before the next event that is not a delta of it, as a copy of its last delta event.
import type { SseEvent } from '../engine/sse.js';
import type { StreamMapper } from '../engine/translator.js';
import type { GatewayError } from '../base/errors.js';
import type { VerdictSink } from '../engine/guardrails.js';
import type { Span } from './detectors.js';
import { guardrailBlocked, isGuardrailBlock, type SpanGuardrail } from './guardrail.js';
import { redactSpans, TEXT_KEYS } from './text.js';

type Path = (string | number)[];
interface Leaf {
  path: Path;
  text: string;
  windowed: boolean;
}
/** The text held back at one place of the stream's events, and the last event that carried it (the template of a flush). */
interface Held {
  text: string;
  event?: string;
  data: unknown;
  path: Path;
}
interface Tally {
  matches?: Record<string, number>;
  ms: number;
  blocked?: boolean;
}

function leavesOf(node: unknown, path: Path, inText: boolean, windowed: boolean, out: Leaf[]): void {
  if (typeof node === 'string') {
    if (inText) out.push({ path: [...path], text: node, windowed });
    return;
  }
  if (!node || typeof node !== 'object' || path.length > 16) return;
  const array = Array.isArray(node);
  for (const [key, value] of array ? node.entries() : Object.entries(node)) {
    path.push(key);
    leavesOf(value, path, array ? inText : TEXT_KEYS.has(key as string), windowed || key === 'delta', out);
    path.pop();
  }
}

function setAt(node: unknown, path: Path, value: string): void {
  let at = node as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  at[path[path.length - 1]] = value;
}

function merged(spans: Span[]): Span[] {
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Span[] = [];
  for (const span of spans) {
    const last = out[out.length - 1];
    if (last && span.start < last.end) out[out.length - 1] = { ...last, end: Math.max(last.end, span.end) };
    else out.push(span);
  }
  return out;
}

export class GuardedStream implements StreamMapper {
  private readonly held = new Map<string, Held>();
  private readonly tallies = new Map<string, Tally>();
  private reported = false;
  streamedOutputTokens?: () => number;

  constructor(
    private readonly inner: StreamMapper,
    private readonly guardrails: readonly SpanGuardrail[],
    private readonly holdChars: number,
    private readonly sink: VerdictSink,
    /** The call's restored values: their placeholders in the answer's text are put back (held whole like any match). */
    private readonly restore?: { spans(text: string): Span[] },
  ) {
    for (const g of guardrails) this.tallies.set(g.id, { ms: 0 });
    if (inner.streamedOutputTokens) this.streamedOutputTokens = () => inner.streamedOutputTokens!();
  }

  push(event: SseEvent, parse: () => unknown): SseEvent[] {
    return this.guard(this.inner.push(event, parse));
  }

  end(): SseEvent[] {
    const events = [...this.guard(this.inner.end()), ...this.flushAll()];
    this.report();
    return events;
  }

  fail(error: GatewayError): SseEvent[] {
    // A guardrail's block shows nothing held; another failure first lets out what was held, checked.
    const held = isGuardrailBlock(error) ? [] : this.flushAllSafely();
    this.report();
    return [...held, ...this.inner.fail(error)];
  }

  drain(): Promise<void> | undefined {
    return this.inner.drain?.();
  }

  private guard(events: SseEvent[]): SseEvent[] {
    let out: SseEvent[] | undefined;
    for (let i = 0; i < events.length; i++) {
      const replaced = this.checkEvent(events[i]);
      if (replaced && !out) out = events.slice(0, i);
      if (out) out.push(...(replaced ?? [events[i]]));
    }
    return out ?? events;
  }

  /** The events that take `event`'s place (held text let out before it, the event with its text checked); undefined: as it was. */
  private checkEvent(event: SseEvent): SseEvent[] | undefined {
    let data: unknown;
    try {
      data = JSON.parse(event.data);
    } catch {
      data = undefined;
    }
    const leaves: Leaf[] = [];
    if (data && typeof data === 'object') leavesOf(data, [], false, false, leaves);
    const before = leaves.some((leaf) => leaf.windowed) ? [] : this.flushAll();
    let changed = false;
    for (const leaf of leaves) {
      const text = leaf.windowed ? this.window(leaf, event, data) : this.whole(leaf.text);
      if (text === leaf.text) continue;
      setAt(data, leaf.path, text);
      changed = true;
    }
    if (!changed && !before.length) return undefined;
    return [...before, changed ? { event: event.event, data: JSON.stringify(data) } : event];
  }

  /** A delta's text joins its place's window; what the window lets go of is returned, redacted. */
  private window(leaf: Leaf, event: SseEvent, data: unknown): string {
    const key = leaf.path.join('.');
    const held = this.held.get(key) ?? { text: '', data, path: leaf.path };
    held.text += leaf.text;
    held.event = event.event;
    held.data = data;
    this.held.set(key, held);
    return this.release(held, false);
  }

  /** Checks the held text; lets go of all of it (`final`) or of what lies before the window and any match it may still extend. */
  private release(held: Held, final: boolean): string {
    const text = held.text;
    const spans = this.spansOf(text);
    let cut = final || text.length > 16 * this.holdChars ? text.length : Math.max(0, text.length - this.holdChars);
    for (let moved = true; moved; ) {
      moved = false;
      for (const span of spans) {
        if (span.start < cut && (span.end > cut || span.end === text.length) && cut !== text.length) {
          cut = span.start;
          moved = true;
        }
      }
    }
    const out = spans.filter((span) => span.end <= cut);
    for (const span of out) this.count(span);
    held.text = text.slice(cut);
    const released = text.slice(0, cut);
    const redact = out.filter((span) => span.redact);
    return redact.length ? redactSpans(released, merged(redact)) : released;
  }

  /** A text that is whole in its event (a done or completed event's copy of the answer): redacted, or blocked, as it is. */
  private whole(text: string): string {
    const redact = this.spansOf(text).filter((span) => span.redact);
    return redact.length ? redactSpans(text, merged(redact)) : text;
  }

  /** Every guardrail's spans over `text`, marked when they are to be redacted; a block's match ends the stream here. */
  private spansOf(text: string): (Span & { redact: boolean; guardrail: string })[] {
    const all: (Span & { redact: boolean; guardrail: string })[] = [];
    for (const guardrail of this.guardrails) {
      const started = performance.now();
      const spans = guardrail.spans(text);
      const tally = this.tallies.get(guardrail.id)!;
      tally.ms += performance.now() - started;
      if (spans.length && guardrail.action === 'block') {
        tally.blocked = true;
        tally.matches = { ...tally.matches, [spans[0].detector]: (tally.matches?.[spans[0].detector] ?? 0) + 1 };
        throw guardrailBlocked(guardrail.id, 'stream');
      }
      for (const span of spans) all.push({ ...span, redact: guardrail.action === 'redact', guardrail: guardrail.id });
    }
    if (this.restore) for (const span of this.restore.spans(text)) all.push({ ...span, redact: true, guardrail: '' });
    return all;
  }

  private count(span: Span & { guardrail: string }): void {
    // A restored placeholder is no guardrail's match.
    if (!span.guardrail) return;
    const tally = this.tallies.get(span.guardrail)!;
    (tally.matches ??= {})[span.detector] = (tally.matches[span.detector] ?? 0) + 1;
  }

  /** Held text let out, each place as a copy of its last delta event. */
  private flushAll(): SseEvent[] {
    if (!this.held.size) return [];
    const events: SseEvent[] = [];
    for (const held of this.held.values()) {
      const text = this.release(held, true);
      if (!text) continue;
      const copy = JSON.parse(JSON.stringify(held.data)) as unknown;
      setAt(copy, held.path, text);
      events.push({ event: held.event, data: JSON.stringify(copy) });
    }
    this.held.clear();
    return events;
  }

  private flushAllSafely(): SseEvent[] {
    try {
      return this.flushAll();
    } catch {
      return [];
    }
  }

  private report(): void {
    if (this.reported) return;
    this.reported = true;
    for (const guardrail of this.guardrails) {
      const { matches, ms, blocked } = this.tallies.get(guardrail.id)!;
      this.sink({ id: guardrail.id, stage: 'stream', verdict: blocked ? 'block' : matches ? guardrail.action : 'pass', ...(matches ? { matches } : {}), ms });
    }
  }
}
