// Where /metrics may be read: the metrics config section, its token check, and the optional metrics-only listener.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LoadedConfig } from '../engine/loaded-config.js';
import type { Metrics } from '../base/metrics.js';

export interface MetricsOptions {
  token: string;
  listen?: { host: string; port: number };
}

export const metricsOptions = (config: LoadedConfig) => config.gateway.metrics as MetricsOptions;

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether an Authorization header carries the configured token; compared in constant time. */
export function hasMetricsToken(authorization: string | undefined, token: string): boolean {
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  return Boolean(token && presented && timingSafeEqual(digest(presented), digest(token)));
}

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/** A listener that answers GET /metrics and nothing else, for operators who keep metrics off the public address. */
export async function startMetricsServer(metrics: Metrics, listen: { host: string; port: number }): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    if ((req.method === 'GET' || req.method === 'HEAD') && req.url?.split('?')[0] === '/metrics') {
      metrics.scrape().then(
        (text) => {
          res.writeHead(200, { 'content-type': metrics.registry.contentType });
          res.end(req.method === 'HEAD' ? undefined : text);
        },
        () => {
          res.writeHead(500).end();
        },
      );
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('only GET /metrics is served here\n');
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(listen.port, listen.host, () => resolve()));
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
