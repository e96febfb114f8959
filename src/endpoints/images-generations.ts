// POST /v1/images/generations: image models of any channel whose protocol has an openai-images `images` operation; every result archived.
import { pipelineHandler } from '../pipeline/handler.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => pipelineHandler(services, { dialect: 'openai-images', operation: 'images' });

export default create;
