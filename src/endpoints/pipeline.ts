// Every billed endpoint family: the catalogue entry's `pipeline` section names the dialect and the operation; the pipeline does the rest.
import { dialectFor } from '../dialects/index.js';
import { httpPipeline } from '../pipeline/http-adapter.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services, endpoint }) => httpPipeline(services, endpoint.pipeline!.dialect, dialectFor(endpoint));

export default create;
