// POST /v1/responses: OpenAI Responses clients; input_image file ids resolved in the workspace, generated images archived.
import { pipelineHandler } from '../pipeline/handler.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => pipelineHandler(services, { dialect: 'openai-responses', operation: 'responses' });

export default create;
