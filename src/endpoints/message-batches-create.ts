// POST /v1/messages/batches: Anthropic's Message Batch, run by the gateway like /v1/batches (each request a /v1/messages call).
import { createBatch } from '../batches/create.js';
import { parseBatchRequests, toAnthropicBatch } from '../batches/anthropic-wire.js';
import { batchesOptions } from '../batches/options.js';
import { batchEndpoint } from '../batches/plan.js';
import { publicBaseUrl } from '../files/file-object.js';
import type { HandlerFactory } from './types.js';

/** The endpoint every request of a Message Batch goes to. */
const MESSAGES = '/v1/messages';

const create: HandlerFactory = ({ services }) => async (req) => {
  const lines = parseBatchRequests((req.body ?? {}) as Record<string, unknown>, batchesOptions(services.config));
  const endpoint = batchEndpoint(services.config, MESSAGES, 'requests');
  const row = await createBatch(services, req.auth!, { object: 'message_batch', endpoint, inputFileId: null, completionWindow: '24h', metadata: null, lines });
  return toAnthropicBatch(row, publicBaseUrl(services, req));
};

export default create;
