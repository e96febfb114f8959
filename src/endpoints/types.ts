// What an endpoint handler module exports: a factory given what handlers use and its catalogue entry.
import type { EndpointConfig } from '../config/types.js';
import type { Upstreams } from '../engine/upstream.js';
import type { Metrics } from '../base/metrics.js';
import type { TaskCreateDeps } from '../tasks/deps.js';
import type { RouteHandler } from '../http/route-handler.js';

export type { RouteHandler };

/** What handlers use: the pipeline's and the task runner's needs, the metrics registry and the current upstream pools. */
export interface EndpointDeps extends TaskCreateDeps {
  metrics: Metrics;
  /** The current runtime snapshot's upstream pools (readiness reads their circuits). */
  readonly upstreams: Upstreams;
}

export interface HandlerContext {
  services: EndpointDeps;
  endpoint: EndpointConfig;
}

export type HandlerFactory = (ctx: HandlerContext) => RouteHandler | Promise<RouteHandler>;

/** What a task of wire object `object` is called in messages and error codes (`video.task`: `video`). */
export const nounOf = (object: string) => object.replace(/\.task$/, '');

/** The name of the route's one parameter (`/v1/videos/:video_id`: `video_id`). */
export const paramOf = (endpoint: EndpointConfig) => /:([A-Za-z_][A-Za-z0-9_]*)/.exec(endpoint.path)?.[1] ?? 'id';
