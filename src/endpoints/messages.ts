// POST /v1/messages: Anthropic Messages clients to any chat channel (passed through to anthropic-messages, translated elsewhere).
import { pipelineHandler } from '../pipeline/handler.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => pipelineHandler(services, { dialect: 'anthropic-messages', operation: 'chat' });

export default create;
