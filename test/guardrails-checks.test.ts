// The whole-request and whole-answer checks of guardrails, alone against fakes: a moderation answer judged by category
// thresholds, and a check that calls out bounded by its deadline (vitest's fake timers drive the clock) and fail mode.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CheckContext } from '../src/engine/guardrails.js';
import { bounded, type Bounds } from '../src/guardrails/bounded.js';
import { matchedCategories } from '../src/guardrails/moderation.js';
import { readServiceVerdict } from '../src/guardrails/http-verdict.js';
import { PaymentRequiredError } from '../src/base/errors.js';

const answer = (scores: Record<string, number>, flagged: Record<string, boolean> = {}) => ({ results: [{ categories: flagged, category_scores: scores }] });

describe('moderation: categories judged by threshold', () => {
  it('matches a category at or above its own threshold, and only the categories named', () => {
    const spec = { model: 'm', thresholds: { harassment: 0.5 } };
    expect(matchedCategories(answer({ harassment: 0.5, violence: 0.99 }), spec)).toEqual({ harassment: 1 });
    expect(matchedCategories(answer({ harassment: 0.49, violence: 0.99 }), spec)).toBeUndefined();
  });

  it('takes "*" and then `threshold` for the categories thresholds does not name', () => {
    expect(matchedCategories(answer({ harassment: 0.3, violence: 0.6 }), { model: 'm', thresholds: { harassment: 0.2, '*': 0.5 } })).toEqual({ harassment: 1, violence: 1 });
    expect(matchedCategories(answer({ harassment: 0.3, violence: 0.6 }), { model: 'm', thresholds: { harassment: 0.9 }, threshold: 0.5 })).toEqual({ violence: 1 });
  });

  it('with no threshold at all, matches the categories the model itself flags, counted over every result', () => {
    const two = { results: [answer({}, { hate: true, violence: false }).results[0], answer({}, { hate: true }).results[0]] };
    expect(matchedCategories(two, { model: 'm', thresholds: {} })).toEqual({ hate: 2 });
  });

  it('throws on an answer without results (the fail mode then decides)', () => {
    expect(() => matchedCategories({ error: 'nope' }, { model: 'm', thresholds: {} })).toThrow(/no results/);
  });
});

describe('a check bounded by its deadline', () => {
  afterEach(() => void vi.useRealTimers());
  const context = (signal = new AbortController().signal): CheckContext & { warned: unknown[] } => {
    const warned: unknown[] = [];
    return { requestId: 'r', workspaceId: 'w', model: 'm', signal, log: { warn: (obj) => void warned.push(obj) }, internalCall: () => Promise.reject(new Error('unused')), warned };
  };
  const bounds = (failMode: Bounds['failMode'], action: Bounds['action'] = 'block'): Bounds => ({ id: 'g', action, timeoutMs: 100, failMode });
  const never = () => new Promise<never>(() => {});

  it('fails closed past its deadline with a block saying so, and logs the guardrail without any text', async () => {
    vi.useFakeTimers();
    const ctx = context();
    const decided = bounded(bounds('closed'), ctx, never);
    await vi.advanceTimersByTimeAsync(100);
    expect(await decided).toEqual({ verdict: 'block', failed: 'timeout', reason: 'its check did not answer in time' });
    expect(ctx.warned).toEqual([{ guardrail: 'g', failed: 'timeout', code: 'TimeoutError' }]);
  });

  it('fails open past its deadline: a pass marked timeout; a flag-only guardrail failing closed flags', async () => {
    vi.useFakeTimers();
    const open = bounded(bounds('open'), context(), never);
    const flag = bounded(bounds('closed', 'flag'), context(), never);
    await vi.advanceTimersByTimeAsync(100);
    expect(await open).toEqual({ verdict: 'pass', failed: 'timeout' });
    expect(await flag).toMatchObject({ verdict: 'flag', failed: 'timeout' });
  });

  it("aborts the check's signal at the deadline, and decides at once when the client leaves", async () => {
    vi.useFakeTimers();
    let seen: AbortSignal | undefined;
    const decided = bounded(bounds('open'), context(), (signal) => ((seen = signal), never()));
    await vi.advanceTimersByTimeAsync(100);
    await decided;
    expect(seen!.aborted).toBe(true);
    const client = new AbortController();
    const left = bounded(bounds('closed'), context(client.signal), never);
    client.abort();
    expect(await left).toMatchObject({ verdict: 'block', failed: 'error' });
  });

  it("returns the check's own decision in time, and lets a spend cap's 402 through whatever the fail mode", async () => {
    expect(await bounded(bounds('closed'), context(), async () => ({ verdict: 'flag', matches: { x: 1 } }))).toEqual({ verdict: 'flag', matches: { x: 1 } });
    await expect(bounded(bounds('open'), context(), () => Promise.reject(new PaymentRequiredError('cap', {})))).rejects.toBeInstanceOf(PaymentRequiredError);
  });
});

describe("http guard: the service's answer read strictly", () => {
  const texts = ['plain', 'a 👋 b Alice c'];

  it("turns code-point spans into the text's own offsets, merged, labelled", () => {
    const read = readServiceVerdict({ verdict: 'redact', redactions: [{ text: 1, start: 6, end: 11, label: 'name' }, { text: 1, start: 8, end: 13 }] }, texts, 'svc');
    expect(read).toMatchObject({ verdict: 'redact', labels: [] });
    const spans = (read as { spans: Map<number, unknown> }).spans.get(1);
    expect(spans).toEqual([{ start: 7, end: 14, detector: 'name' }]);
    expect(texts[1].slice(7, 12)).toBe('Alice');
  });

  it('keeps a whole text given back, and null as "unchanged"', () => {
    const read = readServiceVerdict({ verdict: 'redact', texts: [null, 'rewritten'] }, texts, 'svc') as { texts: Map<number, string> };
    expect([...read.texts]).toEqual([[1, 'rewritten']]);
  });

  it.each([
    ['no verdict', { allowed: true }, /no verdict/],
    ['a span past its text', { verdict: 'redact', redactions: [{ text: 0, start: 2, end: 9 }] }, /past the end/],
    ['a text it was not sent', { verdict: 'redact', redactions: [{ text: 5, start: 0, end: 1 }] }, /not sent/],
    ['a label that is text, not a name', { verdict: 'block', labels: ['Alice Smith'] }, /short name/],
    ['texts not one for one', { verdict: 'redact', texts: ['x'] }, /one for one/],
    ['redact with nothing to redact', { verdict: 'redact' }, /neither/],
  ])('refuses an answer with %s', (_what, answer, message) => {
    expect(() => readServiceVerdict(answer, texts, 'svc')).toThrow(message);
  });
});
