// The pipeline's dialects by the name a catalogue entry gives them (`pipeline.dialect`): what differs between the
// families of billed calls. Any family without a dialect of its own is a `relay` (docs/endpoints.md).
import type { EndpointConfig } from '../config/types.js';
import { chatDialect } from './chat.js';
import type { Dialect } from '../pipeline/dialect.js';
import { evaluateDialect } from './evaluate.js';
import { imagesDialect } from './images.js';
import { relayDialect } from './relay.js';
import type { PipelineSpec } from './spec.js';


type DialectFactory = (spec: PipelineSpec, endpoint: EndpointConfig) => Dialect<any, any>;

const chat: DialectFactory = (spec) => chatDialect(spec.operation);

export const dialects: Readonly<Record<string, DialectFactory>> = {
  'openai-chat': chat,
  'anthropic-messages': chat,
  'openai-responses': chat,
  evaluate: (spec) => evaluateDialect(spec.operation),
  'openai-images': (spec, endpoint) => imagesDialect(spec.operation, { form: endpoint.multipart }),
  relay: (spec, endpoint) => relayDialect(spec, endpoint),
};

/** The dialect an endpoint's `pipeline` section names; an unknown name stops the gateway from starting. */
export function dialectFor(endpoint: EndpointConfig): Dialect<any, any> {
  const spec = endpoint.pipeline;
  if (!spec) throw new Error(`endpoint "${endpoint.name}": handler "pipeline" needs a pipeline section`);
  const factory = Object.hasOwn(dialects, spec.dialect) ? dialects[spec.dialect] : undefined;
  if (!factory) throw new Error(`endpoint "${endpoint.name}": no pipeline dialect "${spec.dialect}" (known: ${Object.keys(dialects).join(', ')})`);
  return factory(spec, endpoint);
}
