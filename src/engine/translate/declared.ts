// Builds a ChatTranslator from a protocol's `translations.<client dialect>` section: everything pair-specific is data.
import type { ModelRoute, ProtocolConfig, TranslationSchema } from '../../config/types.js';
import type { LoadedConfig } from '../../compile/loaded-config.js';
import type { TemplateSet } from '../liquid.js';
import { GatewayError, TranslationError } from '../../errors.js';
import type { ChatTranslator, TranslateContext } from '../translator.js';
import { renderer, type Renderer } from './render.js';
import { ResponsesStreamMachine } from './responses-stream.js';
import { StreamMachine, type StreamMachineSpec } from './stream-machine.js';

/** The stream machine a client dialect's events need: Responses clients get numbered events and whole items on *.done. */
const machines: Record<string, typeof StreamMachine> = { 'openai-responses': ResponsesStreamMachine };

/** A protocol's `translations.<client>` section (schemas/translation.schema.json). Mappings are YAML trees compiled at load (src/engine/mapping/); usage is read per protocol operation (`operations.<name>.usage`). */
export type TranslationSpec = TranslationSchema;

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
  const refused = Object.entries(spec.fields ?? {}).filter(([, rule]) => rule.action === 'refuse');
  const stream: StreamMachineSpec = {
    decode: Object.fromEntries(Object.entries(spec.stream.decode).map(([name, source]) => [name, renderer(config, source, `${where}/stream/decode/${name}`)])),
    encode: Object.fromEntries(Object.entries(spec.stream.encode).map(([name, source]) => [name, renderer(config, source, `${where}/stream/encode/${name}`)])) as Record<string, Renderer> as StreamMachineSpec['encode'],
    maps,
    clock,
  };

  const translator: ChatTranslator = {
    operation: spec.operation,
    request(body, ctx) {
      for (const [field, rule] of refused) {
        if (body[field] !== undefined && body[field] !== null) {
          throw new TranslationError(`"${field}" cannot be sent to channel "${ctx.route.channel.id}": ${rule.reason}`, field);
        }
      }
      return renderRequest({ body, model: ctx.route.model.upstream ?? ctx.route.model.id, maps }) as Record<string, unknown>;
    },
    response(body, ctx) {
      try {
        const usage = ctx.usage();
        const scope = { body, request: ctx.request ?? {}, model: ctx.clientModel, usage, cost: usage ? ctx.costOf(usage) : null, now: Math.floor(clock() / 1000), id: ctx.requestId, maps };
        return renderResponse(scope) as Record<string, unknown>;
      } catch (err) {
        return asUpstreamFault(err, ctx);
      }
    },
    stream: (ctx, clientBody) => new Machine(stream, ctx, clientBody),
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
