// Every billed endpoint family, tasks included: the catalogue entry's `pipeline` section names the flow (and the client's
// wire dialect); the pipeline does the rest.
import { flowFor } from '../flows/index.js';
import { httpPipeline } from '../pipeline/http-adapter.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services, endpoint }) => httpPipeline(services, endpoint.pipeline!.dialect!, flowFor(endpoint, services), endpoint.pipeline!.operation);

export default create;
