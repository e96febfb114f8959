// A Fastify route handler: what endpoints build and what the pipeline and the tracer wrap.
import type { FastifyReply, FastifyRequest } from 'fastify';

export type RouteHandler = (req: FastifyRequest, reply: FastifyReply) => Promise<unknown> | unknown;
