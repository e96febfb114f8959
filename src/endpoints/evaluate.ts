// POST /v1/evaluate: typed evaluation, natively or through a chat model's logprobs, as the model's protocol declares.
import { pipelineHandler } from '../pipeline/handler.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => pipelineHandler(services, { dialect: 'evaluate', operation: 'evaluate' });

export default create;
