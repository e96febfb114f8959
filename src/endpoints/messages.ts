// POST /v1/messages: Anthropic Messages clients to any chat channel (passed through to anthropic-messages, translated elsewhere).
import { relayChat } from '../engine/relay.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) =>
  async (req, reply) => relayChat(services, req, reply, { clientDialect: 'anthropic-messages', body: req.body as Record<string, unknown> });

export default create;
