// GET /metrics: Prometheus text exposition.
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (_req, reply) => {
  reply.header('content-type', services.metrics.registry.contentType);
  return services.metrics.registry.metrics();
};
export default create;
