// GET /readyz: the database answers, so requests can be served; each channel's state (enabled, why not, circuit, a key
// pool's entries); and, when the last reload was refused, that it was and why (until a good one), with status
// "degraded": the running config still serves.
import { sql } from 'kysely';
import { lastReload } from '../compile/reload.js';
import type { HandlerFactory } from './types.js';

const create: HandlerFactory = ({ services }) => async (_req, reply) => {
  const circuits = services.upstreams.circuits();
  const keys = services.upstreams.keyStates();
  // A key pool also shows each entry's state by the variable naming it, and what the entries that cannot serve lack.
  const pool = (c: (typeof services.config.channels)[number]) => (c.credentials ? { keys: keys[c.id] ?? {}, ...(c.missingKeys?.length ? { missing: c.missingKeys } : {}) } : {});
  const channels = Object.fromEntries(services.config.channels.map((c) => [c.id, { enabled: !c.disabledReason, ...(c.disabledReason ? { reason: c.disabledReason } : {}), circuit: circuits[c.id], ...pool(c) }]));
  try {
    await sql`select 1`.execute(services.db);
    const reload = lastReload(services);
    if (reload && !reload.ok) return { status: 'degraded', reason: 'the last config reload was refused; the previous config keeps serving', reload: { status: 'failed', at: reload.at, problems: reload.problems }, channels };
    return { status: 'ready', channels, ...(reload ? { reload: { status: 'ok', at: reload.at } } : {}) };
  } catch {
    reply.code(503);
    return { status: 'not ready', reason: 'database unavailable', channels };
  }
};
export default create;
