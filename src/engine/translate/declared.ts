// Builds a ChatTranslator from a protocol's `translations.<client dialect>` section: everything pair-specific is data.
import type { MediaItems, ModelRoute, ProtocolConfig, TranslationSchema } from '../../config/types.js';
import type { LoadedConfig } from '../loaded-config.js';
import type { TemplateSet } from '../liquid.js';
import { GatewayError, TranslationError } from '../../base/errors.js';
import type { ChatTranslator, TranslateContext } from '../translator.js';
import { renderer, type Renderer } from './render.js';
import { ResponsesStreamMachine } from './responses-stream.js';
import { StreamMachine, type StreamMachineSpec } from './stream-machine.js';

/** The stream machine a client dialect's events need: Responses clients get numbered events and whole items on *.done. */
const machines: Record<string, typeof StreamMachine> = { 'openai-responses': ResponsesStreamMachine };

export interface TranslationSpec {
  description?: string;
  operation: string;
  /** Prefix of translated answer and stream ids (the request id's key follows it). */
  idPrefix?: string;
  fields?: Record<string, FieldRule>;
  maps?: Record<string, Record<string, unknown>>;
  /** Mappings: YAML trees compiled at load (src/engine/mapping/). Usage is read per protocol operation (`operations.<name>.usage`). */
  request: unknown;
  response: unknown;
  /** Absent for a dialect that does not stream (OpenAI images). */
  stream?: { decode: Record<string, unknown>; encode: Record<string, unknown> };
  /** Media in the translated answer, archived before it is sent. */
  outputs?: { answer?: MediaItems };
}

/** What happens to one top-level client field (schemas/translation.schema.json `fields`). */
export interface FieldRule {
  action: 'map' | 'ignore' | 'refuse';
  reason?: string;
  /** Values of a refused field that change nothing, ignored instead. */
  neutral?: unknown[];
}

/** A field rule as checked per request: neutral values compared as JSON text (`[text]`, `{}` are values too). */
interface CheckedRule {
  action: FieldRule['action'];
  reason?: string;
  neutral?: Set<string>;
}

const checkedRules = (fields: Record<string, FieldRule> = {}) =>
  new Map<string, CheckedRule>(Object.entries(fields).map(([name, rule]) => [name, { ...rule, neutral: rule.neutral && new Set(rule.neutral.map((v) => JSON.stringify(v))) }]));

/** Throws the 400 for the first client field the table refuses, or does not list at all: nothing is dropped in silence. */
function checkFields(body: Record<string, unknown>, fields: Map<string, CheckedRule>, channel: string) {
  for (const field in body) {
    const rule = fields.get(field);
    if (rule?.action === 'map' || rule?.action === 'ignore') continue;
    const value = body[field];
    if (value === undefined || value === null) continue;
    if (!rule) throw new TranslationError(`"${clientField(field)}" is not a field channel "${channel}" can take from this client: it is neither translated nor known to be safe to leave out`, clientField(field));
    if (rule.neutral?.has(JSON.stringify(value))) continue;
    throw new TranslationError(`"${field}" cannot be sent to channel "${channel}": ${rule.reason}`, field);
  }
}

/** A client's field name as shown back: bounded, never echoed whole. */
const clientField = (name: string) => (name.length > 64 ? `${name.slice(0, 64)}...` : name);

/** A failure while rendering an upstream answer is the upstream's fault, never the client's. */
function asUpstreamFault(err: unknown, ctx: TranslateContext): never {
  if (err instanceof TranslationError) {
    throw new GatewayError('upstream_malformed', 502, 'upstream_error', `channel "${ctx.route.channel.id}" sent an answer that cannot be translated: ${err.message}`);
  }
  throw err;
}

/** `clock` is the time answers and chunks are stamped with (the mapping fixtures fix it). */
export function buildTranslator(config: { templates: TemplateSet }, protocol: ProtocolConfig, clientDialect: string, spec: TranslationSpec, clock: () => number = () => Date.now()): ChatTranslator {
  const where = `${protocol.file} /translations/${clientDialect}`;
  const maps = spec.maps ?? {};
  const renderRequest = renderer(config, spec.request, `${where}/request`);
  const renderResponse = renderer(config, spec.response, `${where}/response`);
  const Machine = machines[clientDialect] ?? StreamMachine;
  const fields = checkedRules(spec.fields);
  const stream: StreamMachineSpec | undefined = spec.stream && {
    decode: Object.fromEntries(Object.entries(spec.stream.decode).map(([name, source]) => [name, renderer(config, source, `${where}/stream/decode/${name}`)])),
    encode: Object.fromEntries(Object.entries(spec.stream.encode).map(([name, source]) => [name, renderer(config, source, `${where}/stream/encode/${name}`)])) as Record<string, Renderer> as StreamMachineSpec['encode'],
    maps,
    clock,
    idPrefix: spec.idPrefix,
  };

  const translator: ChatTranslator = {
    operation: spec.operation,
    request(body, ctx) {
      checkFields(body, fields, ctx.route.channel.id);
      return renderRequest({ body, model: ctx.route.model.upstream ?? ctx.route.model.id, target: ctx.route.model, maps }) as Record<string, unknown>;
    },
    response(body, ctx) {
      try {
        const usage = ctx.usage();
        const scope = { body, request: ctx.request ?? {}, target: ctx.route.model, model: ctx.clientModel, usage, cost: usage ? ctx.costOf(usage) : null, now: Math.floor(clock() / 1000), id: ctx.requestId, maps };
        return renderResponse(scope) as Record<string, unknown>;
      } catch (err) {
        return asUpstreamFault(err, ctx);
      }
    },
    stream(ctx, clientBody) {
      // The cross-check gives every translation from a streaming dialect its stream section.
      if (!stream) throw new TranslationError(`channel "${ctx.route.channel.id}" cannot stream ${clientDialect} answers`, 'stream');
      return new Machine(stream, ctx, clientBody);
    },
    outputs: spec.outputs,
  };
  return translator;
}

const built = new WeakMap<LoadedConfig, Map<string, ChatTranslator | undefined>>();

/** The declared translator for a client dialect on a route's protocol, built once per config. */
export function declaredTranslator(config: LoadedConfig, clientDialect: string, route: ModelRoute): ChatTranslator | undefined {
  let perConfig = built.get(config);
  if (!perConfig) built.set(config, (perConfig = new Map()));
  const key = `${route.protocol.id}\n${clientDialect}`;
  if (!perConfig.has(key)) {
    const spec = route.protocol.translations?.[clientDialect];
    perConfig.set(key, spec ? buildTranslator(config, route.protocol, clientDialect, spec) : undefined);
  }
  return perConfig.get(key);
}
