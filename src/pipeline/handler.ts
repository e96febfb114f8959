// The route handlers of the billed endpoints: an endpoint names its dialect and operation, the pipeline does the rest.
import type { RouteHandler } from '../endpoints/types.js';
import { chatDialect } from './chat.js';
import type { PipelineDeps } from './deps.js';
import type { Dialect } from './dialect.js';
import { evaluateDialect } from './evaluate.js';
import { httpPipeline } from './http-adapter.js';
import { imagesDialect } from './images.js';

export interface PipelineEndpoint {
  /** The client dialect of the endpoint's requests and answers. */
  dialect: 'openai-chat' | 'anthropic-messages' | 'openai-responses' | 'evaluate' | 'openai-images';
  /** The request is a multipart form (image edits). */
  form?: boolean;
  /** The protocol operation the endpoint calls. */
  operation: string;
}

function dialectFor(endpoint: PipelineEndpoint): Dialect<any, any> {
  if (endpoint.dialect === 'evaluate') return evaluateDialect(endpoint.operation);
  if (endpoint.dialect === 'openai-images') return imagesDialect(endpoint.operation, { form: endpoint.form });
  return chatDialect(endpoint.operation);
}

/** A route handler that runs `endpoint`'s requests through the pipeline. Handlers hold no billing of their own. */
export function pipelineHandler(services: PipelineDeps, endpoint: PipelineEndpoint): RouteHandler {
  return httpPipeline(services, endpoint.dialect, dialectFor(endpoint));
}
