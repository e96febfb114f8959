// POST /v1/images/edits: a multipart form of images (files or image_url references), an optional mask and a prompt; results archived.
import { pipelineHandler } from '../pipeline/handler.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => pipelineHandler(services, { dialect: 'openai-images', operation: 'edits', form: true });

export default create;
