// GET /readyz: the database answers, so requests can be served; and each channel's state (enabled, circuit).
import { sql } from 'kysely';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (_req, reply) => {
  const circuits = services.upstreams.circuits();
  const channels = Object.fromEntries(services.config.channels.map((c) => [c.id, { enabled: !c.disabledReason, circuit: circuits[c.id] }]));
  try {
    await sql`select 1`.execute(services.db);
    return { status: 'ready', channels };
  } catch {
    reply.code(503);
    return { status: 'not ready', reason: 'database unavailable', channels };
  }
};
export default create;
