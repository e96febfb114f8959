// GET /readyz: the database answers, so requests can be served.
import { sql } from 'kysely';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (_req, reply) => {
  try {
    await sql`select 1`.execute(services.db);
    return { status: 'ready' };
  } catch {
    reply.code(503);
    return { status: 'not ready', reason: 'database unavailable' };
  }
};
export default create;
