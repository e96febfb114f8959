// The pipeline's flows by the name a catalogue entry gives them (`pipeline.flow`): what differs between the families of
// billed calls. Any family without a flow of its own is a `relay`; an asynchronous one is a `task` (docs/endpoints.md).
import type { EndpointConfig } from '../config/types.js';
import type { Flow } from '../pipeline/flow.js';
import type { TaskCreateDeps } from '../tasks/deps.js';
import { chatFlow } from './chat.js';
import { evaluateFlow } from './evaluate.js';
import { imagesFlow } from './images.js';
import { relayFlow } from './relay.js';
import type { PipelineSpec } from './spec.js';
import { taskFlow } from './task.js';

/** The model kind an entry serves: its modelKind, which a flow that resolves a model needs (the kind comes from data, never from code). */
function kindOf(endpoint: EndpointConfig): string {
  if (!endpoint.modelKind) throw new Error(`endpoint "${endpoint.name}": flow "${endpoint.pipeline?.flow}" needs a modelKind`);
  return endpoint.modelKind;
}

type FlowFactory = (spec: PipelineSpec, endpoint: EndpointConfig, services?: TaskCreateDeps) => Flow<any, any>;

export const flows: Readonly<Record<string, FlowFactory>> = {
  chat: (spec, endpoint) => chatFlow(spec.operation!, kindOf(endpoint)),
  evaluate: (spec, endpoint) => evaluateFlow(spec.operation!, kindOf(endpoint)),
  images: (spec, endpoint) => imagesFlow(spec.operation!, kindOf(endpoint), { form: endpoint.multipart }),
  relay: (spec, endpoint) => relayFlow(spec, endpoint),
  task: (_spec, endpoint, services) => {
    if (!services) throw new Error(`endpoint "${endpoint.name}": a task flow runs only as an HTTP route (not in a batch)`);
    return taskFlow(services, endpoint);
  },
};

/** The flow an endpoint's `pipeline` section names; an unknown name stops the gateway from starting. */
export function flowFor(endpoint: EndpointConfig, services?: TaskCreateDeps): Flow<any, any> {
  const spec = endpoint.pipeline;
  if (!spec) throw new Error(`endpoint "${endpoint.name}": handler "pipeline" needs a pipeline section`);
  const factory = spec.flow && Object.hasOwn(flows, spec.flow) ? flows[spec.flow] : undefined;
  if (!factory) throw new Error(`endpoint "${endpoint.name}": no flow "${spec.flow}" (known: ${Object.keys(flows).join(', ')})`);
  return factory(spec, endpoint, services);
}
