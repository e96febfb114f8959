// POST /v1/chat/completions: OpenAI chat clients to any chat channel.
import { pipelineHandler } from '../pipeline/handler.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => pipelineHandler(services, { dialect: 'openai-chat', operation: 'chat' });

export default create;
