// A batch's lines checked before anything is reserved: each names a catalogue endpoint the batch allows, passes that
// endpoint's request schema and the key's scope for it, names a model the gateway serves, and has a worst case (the
// pipeline's own resolve and estimate stages, at batch prices). Every refusal is a 400 naming the line.
import type { AuthContext } from '../auth/authenticate.js';
import { requireScope } from '../auth/authenticate.js';
import { GatewayError, ValidationError, clientValue } from '../base/errors.js';
import type { EndpointConfig, ModelRoute } from '../config/types.js';
import { flowFor } from '../flows/index.js';
import type { Snapshot } from '../engine/runtime.js';
import { schemaError } from '../http/schema-error.js';
import type { Flow } from '../pipeline/flow.js';
import type { PipelineDeps } from '../pipeline/deps.js';
import { batchPricedConfig, LineCall } from './line-call.js';
import type { BatchesOptions } from './options.js';
import { RelayChoice } from './relay-choice.js';

/** One line as the client sent it (an OpenAI input line, or one of an Anthropic batch's requests). */
export interface InputLine {
  customId: string;
  body: Record<string, unknown>;
  /** Where the client's error should point: `line 3` of the file, or `requests[2]`. */
  where: string;
}

export interface PlannedBatch {
  /** The sum of the lines' worst cases (batch prices): what the batch reserves. */
  estimateMicros: number;
  /** The first line's route: the model the batch's reservation is made against. */
  route: ModelRoute;
  /** The channel whose vendor batch API the lines go to (src/batches/relay-choice.ts); undefined: the gateway runs them. */
  relayTo: string | undefined;
}

const flows = new WeakMap<EndpointConfig, Flow<any, any>>();

/** The flow an endpoint's pipeline names, built once per endpoint. */
export function lineFlow(endpoint: EndpointConfig): Flow<any, any> {
  let flow = flows.get(endpoint);
  if (!flow) flows.set(endpoint, (flow = flowFor(endpoint)));
  return flow;
}

/** A JSON pipeline route taking POST whose call ends with its answer (a task's outlives it). */
const batchable = (e: EndpointConfig) => !!e.pipeline && e.pipeline.flow !== 'task' && !e.multipart && e.method.includes('POST');

/** The catalogue endpoint a batch's lines go to: a JSON pipeline route taking POST at `path`; else a 400 naming `param`. */
export function batchEndpoint(config: { endpoints: readonly EndpointConfig[] }, path: string, param: string): EndpointConfig {
  const endpoint = config.endpoints.find((e) => e.path === path && batchable(e));
  if (!endpoint) {
    const allowed = config.endpoints.filter(batchable).map((e) => e.path);
    throw new ValidationError(`${clientValue(path)} cannot be batched; batch one of: ${allowed.join(', ')}`, param, 'invalid_endpoint');
  }
  return endpoint;
}

/** Checks every line and adds up their worst cases; throws the first refusal, naming its line. */
export async function planBatch(services: PipelineDeps, snapshot: Snapshot, auth: AuthContext, endpoint: EndpointConfig, lines: InputLine[], relay: BatchesOptions['relay']): Promise<PlannedBatch> {
  requireScope(auth, endpoint.scope ?? null);
  const dialect = lineFlow(endpoint);
  const validate = endpoint.requestSchema ? services.schemas.validator(endpoint.requestSchema) : undefined;
  const config = batchPricedConfig(snapshot.config);
  const seen = new Set<string>();
  let estimateMicros = 0;
  let route: ModelRoute | undefined;
  const relayed = new RelayChoice(snapshot.config, relay);
  for (const line of lines) {
    if (seen.has(line.customId)) throw new ValidationError(`${line.where}: custom_id ${clientValue(line.customId)} is used twice; each line needs its own`, 'custom_id', 'duplicate_custom_id');
    seen.add(line.customId);
    if (line.body.stream === true) throw new ValidationError(`${line.where}: a batch line cannot stream; drop "stream"`, 'stream');
    const call = new LineCall({ services, config, upstreams: snapshot.upstreams, auth, dialect: endpoint.pipeline!.dialect!, body: line.body, bodyBytes: Buffer.byteLength(JSON.stringify(line.body)), requestId: 'plan', log: noLog, baseUrl: '' });
    try {
      if (validate && !validate(line.body)) throw schemaError(validate.errors![0]);
      const read = dialect.read ? await dialect.read(call) : undefined;
      const plan = dialect.resolve(call, read);
      route ??= plan.routes[0];
      relayed.add(plan.routes[0]);
      estimateMicros += dialect.estimate(call, plan);
    } catch (err) {
      if (!(err instanceof GatewayError) || !err.expose || err.statusCode >= 500) throw err;
      // A model the gateway does not serve is 404 on its own route; in a batch it is the batch's input that is wrong.
      throw new ValidationError(`${line.where}: ${err.message}`, err.param, err.code);
    } finally {
      call.dispose();
    }
  }
  if (!route) throw new ValidationError('a batch needs at least one line', 'input_file_id', 'empty_batch');
  return { estimateMicros, route, relayTo: relayed.channel };
}

const noop = () => undefined;
const noLog = { error: noop, warn: noop, info: noop, debug: noop };
