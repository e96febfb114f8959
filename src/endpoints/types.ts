// What an endpoint handler module exports: a factory given the services and its catalogue entry.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EndpointConfig } from '../config/types.js';
import type { Services } from '../services.js';

export type RouteHandler = (req: FastifyRequest, reply: FastifyReply) => Promise<unknown> | unknown;

export interface HandlerContext {
  services: Services;
  endpoint: EndpointConfig;
}

export type HandlerFactory = (ctx: HandlerContext) => RouteHandler | Promise<RouteHandler>;
