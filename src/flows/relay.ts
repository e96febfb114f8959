// The relay: any endpoint family the catalogue declares without a dialect of its own (embeddings, moderation, audio,
// rerank, ...). The request passes through with only `model` mapped (a form keeps its file names); the answer is relayed
// as the entry says (JSON gaining `cost`, text or bytes with an `x-cost` header, an event stream with its final usage
// event gaining `cost`); usage is read by the protocol operation's mapping and priced in the model's own units.
import { pipeline } from 'node:stream/promises';
import { webClasses } from '../net/undici.js';
import { billingConfig } from '../billing/config.js';
import { pricesTokens, renderCost, tokenCostMicros, type TokenUsage } from '../billing/cost.js';
import { estimateRelayMicros, searchUnitsBound } from '../billing/estimate.js';
import { impossibleUnits, pricedUnits, type UnitRequest } from '../billing/units.js';
import { impossibleRelayTokens } from '../billing/usage-bounds.js';
import type { Charge } from '../billing/meter.js';
import type { EndpointConfig, ModelRoute, PriceConfig } from '../config/types.js';
import { relayedAs } from '../engine/passthrough.js';
import type { StreamMapper } from '../engine/translator.js';
import { defaultModelOf } from '../engine/models.js';
import { resolveCallModel } from '../pipeline/resolve.js';
import { servesOperation } from '../engine/translators.js';
import { errorBody, ConfigMismatchError, type Envelope } from '../base/errors.js';
import { schemaError } from '../http/schema-error.js';
import { forgetSourceText, replaceTopLevel, sendAsText, sourceTextOf } from '../http/json-text.js';
import type { Call } from '../pipeline/call.js';
import { readBounded, readJsonObject } from '../pipeline/decode.js';
import { hasFraming } from '../pipeline/framing.js';
import type { Flow } from '../pipeline/flow.js';
import type { Sent } from '../pipeline/send.js';
import { reportedCounts, SettlingAnswer, settledTokens, settleReported } from '../pipeline/settle.js';
import { relayStream } from '../pipeline/stream.js';
import { usageReaderFor, type UsageReader } from '../pipeline/usage.js';
import type { PipelineSpec } from './spec.js';
import { readRelayForm, type RelayForm } from './relay-form.js';

interface RelayPlan {
  routes: ModelRoute[];
  /** The request's fields: its JSON body, or a form's text fields. */
  fields: Record<string, unknown>;
  form?: RelayForm;
  /** How the answer comes back for this request. */
  answer: 'json' | 'text' | 'binary';
  /** What the request makes possible, unit by unit: what it reserves and the most an honest upstream reports. */
  units: UnitRequest;
  /** Bytes of the request (a form's files included): no honest count of input tokens passes it. */
  bodyBytes: number;
}

/** The answer kind of one request: the entry's, or text when the request asks for a text format. */
function answerKind(spec: PipelineSpec, fields: Record<string, unknown>): RelayPlan['answer'] {
  const when = spec.textWhen;
  if (when && typeof fields[when.field] === 'string' && when.values.includes(fields[when.field] as string)) return 'text';
  return spec.answer ?? 'json';
}

/** Characters of the field a `perMillionCharacters` price counts (code points, as vendors count them). */
function charactersOf(spec: PipelineSpec, fields: Record<string, unknown>): number | undefined {
  if (!spec.charactersOf) return undefined;
  const value = fields[spec.charactersOf];
  if (typeof value !== 'string') return 0;
  let n = 0;
  for (const _ of value) n++;
  return n;
}

/** Search units by Cohere's rule (the estimate) and documents x queries (the most), for an entry that counts them. */
function searchesOf(spec: PipelineSpec, fields: Record<string, unknown>): UnitRequest['searches'] {
  const rule = spec.searches;
  if (!rule) return undefined;
  const documents = fields[rule.documents];
  const queries = Math.max(1, Array.isArray(fields[rule.query]) ? (fields[rule.query] as unknown[]).length : 1);
  const estimate = searchUnitsBound(fields[rule.query], documents, rule.documentsPerSearch, rule.tokensPerDocument);
  return { estimate, most: Math.max(estimate, (Array.isArray(documents) ? documents.length : 1) * queries) };
}

/** What the gateway knows of the request for its units: fields, files, and what it measured (audio, characters, searches). */
function unitRequest(spec: PipelineSpec, fields: Record<string, unknown>, form: RelayForm | undefined): UnitRequest {
  return { fields, files: form?.files.map((f) => f.field), seconds: form?.seconds, characters: charactersOf(spec, fields), searches: searchesOf(spec, fields) };
}

/** Why reported usage is impossible for this request on `route`: tokens past its input's size or the model's limits, a unit past the most the request can use. */
function relayBound(call: Call, plan: RelayPlan, route: ModelRoute): (counts: TokenUsage) => string | undefined {
  return (counts) => impossibleRelayTokens(route.model, billingConfig(call.config).defaultLimits, plan.bodyBytes, counts) ?? impossibleUnits(route.model, plan.units, counts.units);
}

/** The upstream request: the client's JSON (its own text, model replaced), or its form with the model replaced. */
function outgoing(call: Call, plan: RelayPlan, route: ModelRoute): unknown {
  const model = route.model.upstream ?? route.model.id;
  if (!plan.form) return relayedAs(call.body, model);
  const form = new (webClasses().FormData)();
  for (const [name, value] of Object.entries({ ...plan.form.fields, model })) {
    for (const item of Array.isArray(value) ? value : [value]) form.append(name, String(item));
  }
  for (const file of plan.form.files) form.append(file.field, new Blob([new Uint8Array(file.bytes)], { type: file.contentType }), file.filename);
  return form;
}

/** The x-cost header's value: `{"amount": ..., "currency": "USD"}`. */
const costHeader = (micros: number, currency: string) => JSON.stringify(renderCost({ micros, currency }));

/**
 * What the call is charged by: the usage the upstream reported with what the gateway measured (characters, seconds of
 * audio), when together they cover every unit the price counts; undefined otherwise (a token-priced model that reported
 * no tokens, a unit reported by neither), and the reservation is charged instead.
 */
function settlementCounts(price: PriceConfig, reported: TokenUsage | undefined, request: UnitRequest): TokenUsage | undefined {
  if (price.free) return reported ?? { inputTokens: 0, outputTokens: 0 };
  if (pricesTokens(price) && !reported) return undefined;
  const units: Record<string, number> = { ...reported?.units };
  for (const unit of pricedUnits(price)) {
    if (unit.micros === 0 || units[unit.name] !== undefined) continue;
    // A unit the vendor did not report: what the gateway measured (audio by the started second), else the reservation.
    const measured = unit.measured?.(request);
    if (measured === undefined) return undefined;
    units[unit.name] = measured;
  }
  return { inputTokens: 0, outputTokens: 0, ...reported, units };
}

/** Settles the charge from `counts` (the reservation when there are none); returns the micros the answer reports. */
async function settle(call: Call, charge: Charge, route: ModelRoute, counts: TokenUsage | undefined): Promise<number> {
  if (!counts) {
    call.log.warn({ channel: route.channel.id }, 'upstream reported no usage; charging the reserved worst case');
    return (await charge.settleReserved()).chargedMicros;
  }
  const costMicros = tokenCostMicros(route.model.price, counts);
  await settleReported(charge, route, call.log, { costMicros, ...settledTokens(counts), route });
  return costMicros;
}

/** A JSON answer: the vendor's fields as they came (its `model` named back as the client sent it), plus `cost`. */
function jsonAnswer(answer: Record<string, unknown>, clientModel: unknown, cost: { amount: number; currency: string }): Record<string, unknown> {
  const changes: Record<string, unknown> = { ...(typeof answer.model === 'string' ? { model: clientModel } : {}), cost };
  const document = { ...answer, ...changes };
  const text = sourceTextOf(answer);
  if (text !== undefined) {
    const relayed = replaceTopLevel(text, Object.fromEntries(Object.entries(changes).map(([k, v]) => [k, JSON.stringify(v)])));
    if (relayed !== undefined) sendAsText(document, relayed);
  }
  return document;
}

/** Text or bytes relayed with the cost in a header: text read within the answer limit, bytes piped as they arrive. */
async function relayBody(call: Call, sent: Sent, plan: RelayPlan, costMicros: number): Promise<void> {
  const head = {
    'content-type': String(sent.response.headers['content-type'] ?? (plan.answer === 'text' ? 'text/plain; charset=utf-8' : 'application/octet-stream')),
    'x-cost': costHeader(costMicros, sent.route.model.price.currency),
    'x-request-id': call.requestId,
  };
  if (plan.answer === 'text') {
    let text = await readBounded(sent);
    if (call.checkInputAnswer) {
      // A transcript as text (text, srt, vtt) checked as the input it is (the call is already charged).
      const node = { text };
      if (await call.checkInputAnswer(node)) text = node.text;
    }
    call.openStream({ ...head, 'content-length': String(Buffer.byteLength(text)) }, false).end(text);
    return;
  }
  const res = call.openStream(head, true);
  try {
    await pipeline(sent.response.body, res);
  } catch (err) {
    // The head is out: a broken upstream body ends the client's response early, which is all the client can be told.
    if (!res.destroyed) res.destroy(err as Error);
    if (!call.clientGone) call.log.warn({ err, channel: sent.route.channel.id }, 'the upstream body broke off while relayed');
  }
}

/**
 * A relayed event stream: every event as it came, the one that carries the final usage gaining `cost`; a failure
 * midway is a last event in the route's error envelope (Anthropic's SDKs read an `error` event).
 */
function relayedEvents(usage: UsageReader, price: PriceConfig, envelope: Envelope): StreamMapper {
  let costed = false;
  return {
    push(event, parse) {
      // The usage reader has read this event before the mapper sees it.
      if (costed || !usage.final) return [event];
      costed = true;
      const counts = usage.counts();
      const data = parse();
      if (!counts || !data || typeof data !== 'object' || Array.isArray(data)) return [event];
      const cost = renderCost({ micros: tokenCostMicros(price, counts), currency: price.currency });
      return [{ ...(event.event === undefined ? {} : { event: event.event }), data: JSON.stringify({ ...data, cost }) }];
    },
    end: () => [],
    fail: (error) => [{ ...(envelope === 'anthropic' ? { event: 'error' } : {}), data: JSON.stringify(errorBody(error, envelope)) }],
  };
}

/** decode, settle and answer: JSON with its cost, an event stream relayed, or text and bytes relayed with an x-cost header. */
async function relayAnswer(call: Call, spec: PipelineSpec, endpoint: EndpointConfig, plan: RelayPlan, sent: Sent, charge: Charge): Promise<unknown> {
  const usage = usageReaderFor(call.config, sent, spec.operation!, 1, relayBound(call, plan, sent.route), { bytes: plan.bodyBytes });
  // An operation that may stream (its streamFlag), and an upstream that did: relayed event by event, settled on its final usage.
  if (sent.operation.streamFlag !== undefined && hasFraming(sent)) return relayStream(call, sent, relayedEvents(usage, sent.route.model.price, endpoint.envelope), usage, charge);
  if (plan.answer === 'json') {
    const answer = await readJsonObject(sent);
    usage.fromAnswer(answer);
    const counts = settlementCounts(sent.route.model.price, await reportedCounts(call, charge, sent.route, usage), plan.units);
    const costMicros = counts ? tokenCostMicros(sent.route.model.price, counts) : charge.ref.amountMicros;
    const cost = renderCost({ micros: costMicros, currency: sent.route.model.price.currency });
    const settling = settle(call, charge, sent.route, counts).then(() => undefined);
    if (call.checkInputAnswer) {
      // A transcript checked as the input it is, once charged: a block refuses it, the upstream's work paid for.
      await settling;
      if (await call.checkInputAnswer(answer)) forgetSourceText(answer);
    }
    return new SettlingAnswer(jsonAnswer(answer, plan.fields.model, cost), settling, costMicros > charge.ref.amountMicros);
  }
  // Text and bytes carry no usage: what the gateway measured, else the reservation.
  const costMicros = await settle(call, charge, sent.route, settlementCounts(sent.route.model.price, undefined, plan.units));
  await relayBody(call, sent, plan, costMicros);
  return undefined;
}

/**
 * The request's fields, with the kind's default model (a model marked `defaultForKind`) when the request names none and
 * its schema lets it: a copy, so the client's own JSON text still goes upstream with only `model` added.
 */
function withDefaultModel(call: Call, fields: Record<string, unknown>, kind: string): Record<string, unknown> {
  if (fields.model !== undefined) return fields;
  const model = defaultModelOf(call.config, kind);
  return model === undefined ? fields : { ...fields, model };
}

/** The dialect of a relayed family: its catalogue entry says everything that differs. */
export function relayFlow(spec: PipelineSpec, endpoint: EndpointConfig): Flow<RelayPlan, RelayForm | undefined> {
  const kind = endpoint.modelKind;
  if (!kind) throw new Error(`endpoint "${endpoint.name}": a relay needs the modelKind it serves`);
  return {
    answerIsInput: spec.answerIsInput ? (_call, plan) => (plan.fields.stream === true || plan.fields.stream === 'true' ? 'streamed' : 'whole') : undefined,
    read: endpoint.multipart
      ? async (call) => {
          const form = await readRelayForm(call, spec);
          if (endpoint.requestSchema) {
            const validate = call.services.schemas.validator(endpoint.requestSchema);
            if (!validate(form.fields)) throw schemaError(validate.errors![0]);
          }
          return form;
        }
      : undefined,
    resolve(call, form) {
      const fields = withDefaultModel(call, form ? form.fields : call.body, kind);
      const routes = resolveCallModel(call, fields.model, kind);
      for (const route of routes) {
        if (!servesOperation(route, spec.operation!)) throw new ConfigMismatchError(`endpoint "${endpoint.name}" sends operation "${spec.operation}", which channel "${route.channel.id}" (protocol "${route.protocol.id}") serving model "${route.model.id}" does not serve`);
      }
      return { routes, fields, form, answer: answerKind(spec, fields), units: unitRequest(spec, fields, form), bodyBytes: form ? form.used : call.bodyBytes };
    },
    estimate: (call, plan) => estimateRelayMicros(plan.routes, plan.bodyBytes, plan.units, billingConfig(call.config).defaultLimits),
    request: (call, plan, route) => ({ operation: spec.operation!, document: outgoing(call, plan, route) }),
    answer: (call, plan, sent, charge) => relayAnswer(call, spec, endpoint, plan, sent, charge),
  };
}
