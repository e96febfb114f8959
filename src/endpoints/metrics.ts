// GET /metrics: Prometheus text, only to a bearer of metrics.token (metrics.listen serves it on its own address instead).
import { AuthError, NotFoundError } from '../base/errors.js';
import { hasMetricsToken, metricsOptions } from '../telemetry/metrics-server.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => {
  const { token } = metricsOptions(services.config);
  return async (req, reply) => {
    if (!token) throw new NotFoundError('metrics are not served on this address; an operator can set metrics.token or metrics.listen', 'metrics_disabled');
    if (!hasMetricsToken(req.headers.authorization, token)) throw new AuthError('GET /metrics needs "Authorization: Bearer <metrics token>"', 'invalid_metrics_token');
    reply.header('content-type', services.metrics.registry.contentType);
    return services.metrics.scrape();
  };
};
export default create;
