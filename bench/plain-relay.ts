// The floor a relay can reach on this machine: bare fastify + undici forwarding one route, no auth, billing or logs. Prints its URL.
import Fastify from 'fastify';
import { Pool } from 'undici';

const upstream = process.env.UPSTREAM_URL!;
const pool = new Pool(upstream, { connections: Number(process.env.RELAY_CONNECTIONS ?? 128) });
const app = Fastify({ logger: false });
app.post('/v1/chat/completions', async (req, reply) => {
  const res = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, body: JSON.stringify(req.body) });
  // A stream is piped on as it arrives (for the bare relay's time to first token).
  if ((req.body as { stream?: boolean }).stream) return reply.header('content-type', 'text/event-stream').send(res.body);
  return res.body.json();
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });
console.log(`RELAY_URL=${url}`);
