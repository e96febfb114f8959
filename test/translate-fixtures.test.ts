// Runs the mapping fixtures in channels/protocols/tests/: each case is input and expected output, kept as data beside the mappings.
// FIXTURES_WRITE=1 fills in a missing `out` from the current mapping (review the diff before committing it).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config/load.js';
import type { ChannelConfig, ModelRoute } from '../src/config/types.js';
import { renderCost, tokenCostMicros } from '../src/billing/cost.js';
import { GatewayError, UpstreamError } from '../src/errors.js';
import { translatorFor } from '../src/engine/translators.js';
import type { TranslateContext } from '../src/engine/translator.js';
import { repoRoot } from './kit/gateway.js';
import { UsageReader } from '../src/pipeline/usage.js';

interface StreamEvent {
  event?: string;
  data: unknown;
}
interface FixtureCase {
  name: string;
  request?: { in: Record<string, unknown>; out?: unknown; error?: string };
  response?: { in: Record<string, unknown>; out?: unknown; error?: string };
  stream?: { request?: Record<string, unknown>; in: StreamEvent[]; fail?: string; out?: StreamEvent[]; usage?: unknown };
}

const fixturesDir = join(repoRoot, 'channels', 'protocols', 'tests');
const writing = process.env.FIXTURES_WRITE === '1';
const config = await loadConfig(join(repoRoot, 'config.example.yaml'), { env: {} });
const price = { currency: 'USD', inputPerMillion: 1, outputPerMillion: 2, cachedInputPerMillion: 0.5 };

/** Usage as the pipeline reads it: from the raw answer or events, as the protocol's chat operation declares. */
const usageReaderFor = (protocolId: string) => new UsageReader(config, config.protocols.get(protocolId)!.operations.chat.usage, protocolId, 'fixture');

function contextFor(protocolId: string, reader = usageReaderFor(protocolId)): TranslateContext {
  const protocol = config.protocols.get(protocolId);
  if (!protocol) throw new Error(`fixture names unknown protocol ${protocolId}`);
  const route: ModelRoute = {
    model: { id: 'client-model', upstream: 'upstream-model', kind: 'chat', fallback: false, enabled: true, price },
    channel: { id: 'fixture' } as ChannelConfig,
    protocol,
  };
  return { route, clientModel: 'client-model', requestId: 'req_1', usage: () => reader.counts(), costOf: (usage) => renderCost({ micros: tokenCostMicros(price, usage), currency: 'USD' }) };
}

const decoded = (events: { event?: string; data: string }[]): StreamEvent[] =>
  events.map((e) => ({ ...(e.event ? { event: e.event } : {}), data: e.data.startsWith('{') ? JSON.parse(e.data) : e.data }));

function run(client: string, protocolId: string, c: FixtureCase): { out: unknown; usage?: unknown } {
  const reader = usageReaderFor(protocolId);
  const ctx = contextFor(protocolId, reader);
  const translator = translatorFor(config, client, ctx.route);
  if (c.request) return { out: translator.request(c.request.in, ctx) };
  if (c.response) {
    reader.fromAnswer(c.response.in);
    return { out: translator.response(c.response.in, ctx) };
  }
  const s = c.stream!;
  const mapper = translator.stream(ctx, { ...s.request, stream: true });
  const events = [];
  try {
    for (const e of s.in) {
      const event = { event: e.event, data: typeof e.data === 'string' ? e.data : JSON.stringify(e.data) };
      const parse = () => JSON.parse(event.data);
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

beforeAll(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date(1_700_000_000_000));
});
afterAll(() => {
  vi.useRealTimers();
});

for (const file of readdirSync(fixturesDir).filter((f) => f.endsWith('.yaml')).sort()) {
  const path = join(fixturesDir, file);
  const doc = parseDocument(readFileSync(path, 'utf8'));
  const fixture = doc.toJS() as { protocol: string; client: string; cases: FixtureCase[] };

  describe(`mapping fixtures ${file}`, () => {
    fixture.cases.forEach((c, index) => {
      const kind = c.request ? 'request' : c.response ? 'response' : 'stream';
      const expected = c[kind]!;
      it(`${kind}: ${c.name}`, () => {
        if ('error' in expected && expected.error) {
          let thrown: unknown;
          try {
            run(fixture.client, fixture.protocol, c);
          } catch (err) {
            thrown = err;
          }
          expect(thrown).toBeInstanceOf(GatewayError);
          expect((thrown as GatewayError).statusCode).toBe(kind === 'request' ? 400 : 502);
          expect((thrown as Error).message).toContain(expected.error);
          return;
        }
        const result = run(fixture.client, fixture.protocol, c);
        if (writing && expected.out === undefined) {
          doc.setIn(['cases', index, kind, 'out'], result.out);
          if (kind === 'stream') doc.setIn(['cases', index, kind, 'usage'], result.usage);
          writeFileSync(path, doc.toString({ lineWidth: 0, flowCollectionPadding: true }));
          return;
        }
        expect(result.out).toEqual(expected.out);
        if (kind === 'stream') expect(result.usage).toEqual((expected as { usage?: unknown }).usage);
      });
    });
  });
}
