// Runs the mapping fixtures (channels/protocols/tests/*.yaml: input and expected output) against the compiled mappings.
// The loader runs them at every start, so a mapping that cannot render its own fixtures is a config error at the case.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { renderCost, tokenCostMicros } from '../billing/cost.js';
import type { ChannelConfig, ModelRoute, ProtocolConfig } from '../config/types.js';
import { followParsedTexts, keepingParsedTexts, readYamlSource } from '../config/yaml-source.js';
import { GatewayError, UpstreamError } from '../base/errors.js';
import type { TemplateSet } from '../engine/liquid.js';
import { buildTranslator } from '../engine/translate/declared.js';
import { renderer } from '../engine/translate/render.js';
import type { ChatTranslator, TranslateContext } from '../engine/translator.js';
import { UsageReader } from '../pipeline/usage.js';
import type { LoadedConfig } from '../engine/loaded-config.js';

interface StreamEvent {
  event?: string;
  data: unknown;
}
export interface FixtureCase {
  name: string;
  /** What the fixture model accepts (`reasoning: true`, `thinking: true`, ...), merged into its model entry. */
  model?: Record<string, unknown>;
  request?: { in: Record<string, unknown>; out?: unknown; error?: string };
  /** `request`: the client body the answer may echo (a Responses object repeats instructions and tools). */
  response?: { in: Record<string, unknown>; request?: Record<string, unknown>; out?: unknown; error?: string };
  stream?: { request?: Record<string, unknown>; in: StreamEvent[]; fail?: string; out?: StreamEvent[]; usage?: unknown };
  /** A single mapping of the protocol, by JSON pointer (`/evaluate/request`), rendered with `scope`. */
  mapping?: string;
  scope?: Record<string, unknown>;
  out?: unknown;
  error?: string;
}
export interface FixtureFile {
  path: string;
  protocol: string;
  /** Client dialect of the translation that request, response and stream cases run through. */
  client?: string;
  cases: FixtureCase[];
}
export type CaseKind = 'request' | 'response' | 'stream' | 'mapping';

/** What every fixture runs with: fixed ids, clock and price, so outputs are exact. */
export const FIXTURE_CONTEXT = {
  channel: 'fixture',
  clientModel: 'client-model',
  upstreamModel: 'upstream-model',
  requestId: 'req_1',
  nowMs: 1_700_000_000_000,
  price: { currency: 'USD', inputPerMillion: 1, outputPerMillion: 2, cachedInputPerMillion: 0.5 },
};

/**
 * Parsed fixture files by path: parsing YAML is most of what running the fixtures costs, and a reload reads them again.
 * A path not seen yet (another config folder holding the same files: each test gateway's copy of the shipped protocols)
 * is read and answered from the memo of parsed YAML texts (src/config/yaml-source.ts), parsed only when its text is new.
 * Kept as long as that memo keeps texts (a server stops keeping them once it listens).
 */
const parsed = new Map<string, { mtimeMs: number; size: number; file: FixtureFile }>();
followParsedTexts(() => parsed.clear());

/** The fixture file's value; a text that does not parse throws as the YAML parser does. */
function fixtureValue(path: string): Omit<FixtureFile, 'path'> {
  const text = readFileSync(path, 'utf8');
  const source = readYamlSource(path, text);
  return (source.syntaxErrors.length ? parse(text) : source.value) as Omit<FixtureFile, 'path'>;
}

/** The fixture files' names in `dir`, in the order they run (none when it does not exist). */
export function fixtureFileNames(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort();
}

export function readFixtureFiles(dir: string): FixtureFile[] {
  return fixtureFileNames(dir).map((f) => {
    const path = join(dir, f);
    const { mtimeMs, size } = statSync(path);
    const cached = parsed.get(path);
    if (cached && cached.mtimeMs === mtimeMs && cached.size === size) return cached.file;
    const file = { path, ...fixtureValue(path) };
    if (keepingParsedTexts()) parsed.set(path, { mtimeMs, size, file });
    return file;
  });
}

export const kindOf = (c: FixtureCase): CaseKind => (c.request ? 'request' : c.response ? 'response' : c.stream ? 'stream' : 'mapping');

const decoded = (events: { event?: string; data: string }[]): StreamEvent[] =>
  events.map((e) => ({ ...(e.event ? { event: e.event } : {}), data: e.data.startsWith('{') ? JSON.parse(e.data) : e.data }));

/** Runs fixtures of one config: translators are built once per protocol and client. */
export class FixtureRunner {
  private readonly translators = new Map<string, ChatTranslator>();

  constructor(
    private readonly config: { templates: TemplateSet },
    private readonly protocols: Map<string, ProtocolConfig>,
  ) {}

  /** Usage as the pipeline reads it: from the raw answer or events, as the translation's operation declares. */
  usageReader(protocol: ProtocolConfig, operation: string): UsageReader {
    return new UsageReader(this.config as LoadedConfig, protocol.operations[operation]?.usage, `${protocol.file} /operations/${operation}`, FIXTURE_CONTEXT.channel);
  }

  context(protocol: ProtocolConfig, reader?: UsageReader, capabilities?: Record<string, unknown>): TranslateContext {
    const { price } = FIXTURE_CONTEXT;
    const route = {
      model: { id: FIXTURE_CONTEXT.clientModel, upstream: FIXTURE_CONTEXT.upstreamModel, kind: 'chat', fallback: false, enabled: true, price, reasoning: false, thinking: false, prefill: false, structuredOutputs: false, ...capabilities },
      channel: { id: FIXTURE_CONTEXT.channel } as ChannelConfig,
      protocol,
    } as ModelRoute;
    return { route, clientModel: FIXTURE_CONTEXT.clientModel, requestId: FIXTURE_CONTEXT.requestId, usage: () => reader?.counts(), costOf: (usage) => renderCost({ micros: tokenCostMicros(price, usage), currency: price.currency }) };
  }

  private protocol(file: FixtureFile): ProtocolConfig {
    const protocol = this.protocols.get(file.protocol);
    if (!protocol) throw new Error(`names unknown protocol "${file.protocol}"`);
    return protocol;
  }

  private translator(file: FixtureFile, protocol: ProtocolConfig): ChatTranslator {
    const key = `${protocol.id}\n${file.client}`;
    let translator = this.translators.get(key);
    if (!translator) {
      const spec = protocol.translations?.[file.client ?? ''];
      if (!spec) throw new Error(`protocol "${protocol.id}" has no translation for client "${file.client}"`);
      translator = buildTranslator(this.config, protocol, file.client!, spec, () => FIXTURE_CONTEXT.nowMs);
      this.translators.set(key, translator);
    }
    return translator;
  }

  /** The case's output (and a stream's usage); throws what the mapping throws. */
  run(file: FixtureFile, c: FixtureCase): { out: unknown; usage?: unknown } {
    const protocol = this.protocol(file);
    const kind = kindOf(c);
    if (kind === 'mapping') {
      let node: unknown = protocol;
      for (const segment of (c.mapping ?? '').split('/').slice(1)) node = (node as Record<string, unknown> | undefined)?.[segment.replace(/~1/g, '/').replace(/~0/g, '~')];
      if (node === undefined) throw new Error(`protocol "${protocol.id}" has no mapping at ${c.mapping}`);
      return { out: renderer(this.config, node, `${protocol.file} ${c.mapping}`)(c.scope ?? {}) };
    }
    const translator = this.translator(file, protocol);
    // A stream reads its usage as the operation that streams declares it (a stream operation of its own, if named).
    const reader = this.usageReader(protocol, (kind === 'stream' && protocol.operations[translator.operation]?.streamOperation) || translator.operation);
    const ctx = this.context(protocol, reader, c.model);
    if (c.request) return { out: translator.request(c.request.in, ctx) };
    if (c.response) {
      reader.fromAnswer(c.response.in);
      return { out: translator.response(c.response.in, { ...ctx, request: c.response.request }) };
    }
    const s = c.stream!;
    const mapper = translator.stream(ctx, { ...s.request, stream: true });
    const events = [];
    try {
      for (const e of s.in) {
        const event = { event: e.event, data: typeof e.data === 'string' ? e.data : JSON.stringify(e.data) };
        const parse = () => JSON.parse(event.data) as unknown;
        reader.fromEvent(event, parse);
        events.push(...mapper.push(event, parse));
      }
      events.push(...(s.fail ? mapper.fail(new UpstreamError(s.fail)) : mapper.end()));
    } catch (err) {
      // As the relay does: an event the mapper refuses ends the stream with the mapper's error events.
      if (!(err instanceof GatewayError)) throw err;
      events.push(...mapper.fail(err));
    }
    return { out: decoded(events), usage: reader.counts() ?? null };
  }

  /** Why the case fails, at a JSON pointer into its fixture file; undefined when it passes. */
  check(file: FixtureFile, index: number, c: FixtureCase): { pointer: string; message: string } | undefined {
    const kind = kindOf(c);
    const expected = (kind === 'mapping' ? c : c[kind]) as { out?: unknown; error?: string; usage?: unknown };
    const at = `/cases/${index}${kind === 'mapping' ? '' : `/${kind}`}`;
    let result: { out: unknown; usage?: unknown };
    try {
      result = this.run(file, c);
    } catch (err) {
      if (expected.error === undefined) return { pointer: at, message: `"${c.name}" failed: ${(err as Error).message}` };
      const status = kind === 'request' ? 400 : kind === 'response' ? 502 : undefined;
      if (!(err instanceof GatewayError) || (status && err.statusCode !== status)) return { pointer: `${at}/error`, message: `"${c.name}" threw ${(err as Error).message}, not a ${status ?? 'gateway'} error` };
      if (!err.message.includes(expected.error)) return { pointer: `${at}/error`, message: `"${c.name}" threw "${err.message}", expected a message containing "${expected.error}"` };
      return undefined;
    }
    if (expected.error !== undefined) return { pointer: `${at}/error`, message: `"${c.name}" rendered where it should fail with "${expected.error}"` };
    const outDiff = difference(expected.out, result.out, '');
    if (outDiff) return { pointer: `${at}/out${outDiff.path}`, message: `"${c.name}" renders ${outDiff.message}` };
    if (kind === 'stream') {
      const usageDiff = difference(expected.usage, result.usage, '');
      if (usageDiff) return { pointer: `${at}/usage${usageDiff.path}`, message: `"${c.name}" reports usage ${usageDiff.message}` };
    }
    return undefined;
  }
}

const shown = (v: unknown) => (v === undefined ? 'nothing' : JSON.stringify(v));

/** The first place `actual` differs from `expected` (member order aside), as a pointer and a message. */
export function difference(expected: unknown, actual: unknown, path: string): { path: string; message: string } | undefined {
  if (Array.isArray(expected) && Array.isArray(actual)) {
    for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
      const d = difference(expected[i], actual[i], `${path}/${i}`);
      if (d) return d;
    }
    return undefined;
  }
  const isObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (isObject(expected) && isObject(actual)) {
    const e = expected as Record<string, unknown>;
    const a = actual as Record<string, unknown>;
    for (const key of new Set([...Object.keys(e), ...Object.keys(a)])) {
      const d = difference(e[key], a[key], `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
      if (d) return d;
    }
    return undefined;
  }
  if (Object.is(expected, actual)) return undefined;
  return { path, message: `${shown(actual)} at ${path || '/'} where the fixture expects ${shown(expected)}` };
}

/**
 * Runs every fixture under `dir`; each failure is `file:line:col /cases/N/... message` at the fixture's own position.
 * Fixtures of a protocol in `rejected` (its file did not validate, and said so) are skipped.
 */
export function runMappingFixtures(config: { templates: TemplateSet }, protocols: Map<string, ProtocolConfig>, dir: string, rejected: ReadonlySet<string> = new Set()): string[] {
  const runner = new FixtureRunner(config, protocols);
  const problems: string[] = [];
  for (const file of readFixtureFiles(dir)) {
    const protocol = protocols.get(file.protocol);
    if (protocol ? config.templates.failedFiles.has(protocol.file) : rejected.has(file.protocol)) continue;
    const failures = protocol
      ? file.cases.map((c, i) => runner.check(file, i, c)).filter((f): f is { pointer: string; message: string } => !!f)
      : [{ pointer: '/protocol', message: `unknown protocol "${file.protocol}"` }];
    if (!failures.length) continue;
    const source = readYamlSource(file.path);
    for (const f of failures) {
      // A member is shown at its key, a list item at the item.
      const cut = f.pointer.lastIndexOf('/');
      const key = f.pointer.slice(cut + 1).replace(/~1/g, '/').replace(/~0/g, '~');
      const at = /^\d+$/.test(key) ? source.locate(f.pointer) : source.locate(f.pointer.slice(0, cut), key);
      problems.push(`${at} ${f.pointer} ${f.message}`);
    }
  }
  return problems;
}
