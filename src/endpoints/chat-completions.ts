// POST /v1/chat/completions: OpenAI chat clients to any chat channel.
import { relayChat } from '../engine/relay.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) =>
  async (req, reply) => relayChat(services, req, reply, { clientDialect: 'openai-chat', body: req.body as Record<string, unknown> });

export default create;
