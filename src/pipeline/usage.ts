// Reads usage the one way a protocol operation declares it (JSON answer or SSE events), validates it, and knows when it is final.
import type { TokenUsage } from '../billing/cost.js';
import type { ModelLimits, ModelRoute, OperationConfig, UsageSpec } from '../config/types.js';
import type { LoadedConfig } from '../engine/loaded-config.js';
import { GatewayError } from '../base/errors.js';
import { defaultBound, impossibleTokens, type RequestSize } from '../billing/usage-bounds.js';
import { billingConfig } from '../billing/config.js';
import type { SseEvent } from '../engine/sse.js';
import { renderer, type Renderer } from '../engine/translate/render.js';
import { pathSegments } from '../config/paths.js';
import { tokenKeys } from '../config/price-units.js';
import { readPath } from './paths.js';

export function upstreamMalformed(channel: string, detail: string): GatewayError {
  return new GatewayError('upstream_malformed', 502, 'upstream_error', `channel "${channel}" sent a malformed answer: ${detail}`);
}

/** The classes a usage mapping may report besides inputTokens and outputTokens (docs/config.md, price). */
const tokenClasses = ['cachedInputTokens', 'cacheWriteTokens', 'cacheWrite1hTokens', 'audioInputTokens', 'audioOutputTokens'] as const;

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** A mapped count: null when not reported, a count, or a list of counts (null entries skipped) added up. */
function readCount(value: unknown, name: string, channel: string): number | null {
  if (value === null || value === undefined) return null;
  const parts = Array.isArray(value) ? value.filter((v) => v !== null && v !== undefined) : [value];
  if (Array.isArray(value) && parts.length === 0) return null;
  let sum = 0;
  for (const part of parts) {
    if (!isCount(part)) throw upstreamMalformed(channel, `usage ${name} is ${JSON.stringify(part)?.slice(0, 40)}, not a non-negative integer`);
    sum += part;
  }
  return sum;
}

/** Seconds of audio: a non-negative number (fractions allowed), or null when not reported. */
function readSeconds(value: unknown, channel: string): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw upstreamMalformed(channel, `usage seconds is ${JSON.stringify(value)?.slice(0, 40)}, not a non-negative number`);
  return value;
}

interface CompiledSpec {
  from?: string[];
  events: Map<string, { from: string[]; key: string; final: boolean }>;
  tokens: Renderer;
}

const compiled = new WeakMap<UsageSpec, CompiledSpec>();

function compile(config: LoadedConfig, spec: UsageSpec, where: string): CompiledSpec {
  let c = compiled.get(spec);
  if (!c) {
    const events = new Map(
      Object.entries(spec.events ?? {}).map(([name, e]) => {
        const from = pathSegments(e.from);
        return [name, { from, key: from.length ? `"${from[from.length - 1]}"` : '', final: e.final }];
      }),
    );
    c = { from: spec.from === undefined ? undefined : pathSegments(spec.from), events, tokens: renderer(config, spec.tokens, `${where}/usage/tokens`) };
    compiled.set(spec, c);
  }
  return c;
}

/** Usage of one upstream call as it arrives. `counts()` throws upstream_malformed for counts that are not counts. */
export class UsageReader {
  private raw: Record<string, unknown> | undefined;
  private normalised: TokenUsage | undefined;
  private isFinal = false;
  private readonly spec: CompiledSpec | undefined;

  constructor(
    config: LoadedConfig,
    spec: UsageSpec | undefined,
    where: string,
    private readonly channel: string,
    /** The model's declared limits and the choices asked for: usage beyond them is impossible for an honest upstream. */
    private readonly limits?: ModelLimits,
    private readonly choices = 1,
    /** Why counts are impossible for this request beyond the model's limits (its units, its input's size), or undefined. */
    private readonly bound?: (counts: TokenUsage) => string | undefined,
    /** `limits` are the model's own, not the default bound of a model that declares none. */
    private readonly declared = true,
  ) {
    this.spec = spec && compile(config, spec, where);
  }

  /** Usage is final: the answer carried it, or the protocol's final usage event arrived. */
  get final(): boolean {
    return this.isFinal;
  }

  fromAnswer(answer: unknown): void {
    if (!this.spec?.from) return;
    const raw = readPath(answer, this.spec.from);
    if (raw && typeof raw === 'object') {
      this.merge(raw as Record<string, unknown>);
      this.isFinal = true;
    }
  }

  /** Reads an upstream event's usage, parsing its data only when the event may carry usage. */
  fromEvent(event: SseEvent, parse: () => unknown): void {
    const where = this.spec?.events.get(event.event ?? 'message');
    if (!where || !event.data.includes(where.key)) return;
    const raw = readPath(parse(), where.from);
    if (!raw || typeof raw !== 'object') return;
    this.merge(raw as Record<string, unknown>);
    if (where.final) this.isFinal = true;
  }

  /** Token counts and units reported so far, or undefined when the upstream reported none. */
  counts(): TokenUsage | undefined {
    if (!this.raw || !this.spec) return undefined;
    if (this.normalised) return this.normalised;
    const mapped = (this.spec.tokens({ usage: this.raw }) ?? {}) as Record<string, unknown>;
    const input = readCount(mapped.inputTokens, 'inputTokens', this.channel);
    const output = readCount(mapped.outputTokens, 'outputTokens', this.channel);
    // Made only when the mapping names a unit (most name tokens alone); `for in` makes no entry arrays (once an answer).
    let units: Record<string, number> | undefined;
    for (const name in mapped) {
      if (tokenKeys.has(name)) continue;
      const value = mapped[name];
      const n = name === 'seconds' ? readSeconds(value, this.channel) : readCount(value, name, this.channel);
      if (n !== null) (units ??= {})[name] = n;
    }
    if (input === null && output === null && !units) return undefined;
    const counts: TokenUsage = { inputTokens: input ?? 0, outputTokens: output ?? 0 };
    if (units) counts.units = units;
    // Token classes billed at their own prices, each counted inside inputTokens or outputTokens.
    for (const name of tokenClasses) {
      const n = readCount(mapped[name], name, this.channel);
      if (n !== null) counts[name] = n;
    }
    counts.cachedInputTokens = Math.min(counts.cachedInputTokens ?? 0, counts.inputTokens);
    // Reasoning is output, reported back to clients and never priced apart.
    const reasoning = readCount(mapped.reasoningTokens, 'reasoningTokens', this.channel);
    if (reasoning !== null) counts.reasoningTokens = Math.min(reasoning, counts.outputTokens);
    this.checkLimits(counts);
    this.normalised = counts;
    return counts;
  }

  private checkLimits(counts: TokenUsage): void {
    const impossible = impossibleTokens(this.limits, counts, this.choices, this.declared) ?? this.bound?.(counts);
    if (impossible) throw upstreamMalformed(this.channel, impossible);
  }

  private merge(usage: Record<string, unknown>) {
    this.raw ??= {};
    // Counters arrive in several events (input at the start, output at the end); later present values win.
    for (const name in usage) {
      const value = usage[name];
      if (value !== null && value !== undefined) this.raw[name] = value;
    }
    this.normalised = undefined;
  }
}

/**
 * The usage reader for one sent call: the operation's usage spec, named by where it is declared. `choices`: the answers
 * asked for, which the model's limits bound; null when nothing bounds the usage (an upstream running tools of its own).
 * A model without limits is bounded by billing.defaultLimits widened to `request` (its bytes, its output bound).
 * `bound`: what else bounds it.
 */
export function usageReaderFor(
  config: LoadedConfig,
  sent: { route: ModelRoute; operation: OperationConfig },
  operation: string,
  choices: number | null = 1,
  bound?: (counts: TokenUsage) => string | undefined,
  request: RequestSize = {},
): UsageReader {
  const own = sent.route.model.limits;
  const limits = choices === null ? undefined : (own ?? defaultBound(billingConfig(config).defaultLimits, request));
  return new UsageReader(config, sent.operation.usage, `${sent.route.protocol.file} /operations/${operation}`, sent.route.channel.id, limits, choices ?? 1, bound, own !== undefined);
}
