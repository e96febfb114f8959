// Loaded into a relay process with `node --import ./bench/stage-marks.mjs` (the gateway and the bare relay alike): it
// subscribes to the diagnostics channels a request passes (node's http server, undici's upstream client and the
// gateway's own `relay-gateway:stage`), marks a response's first body write, and keeps, per request, when each stage
// was reached (process.hrtime, ns). At exit each process writes its records to `${BENCH_STAGES_DIR}/stages-<pid>.json`.
// Requests are told apart by order: it is meant for concurrency 1, where one request is in flight at a time
// (bench/scenarios/latency.ts).
import diagnostics from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';

const dir = process.env.BENCH_STAGES_DIR;
/** Each request: [stage, ns since it was received][], in the order reached. */
const records = [];
let current;
const now = () => process.hrtime.bigint();

function mark(stage) {
  if (!current) return;
  // A stage reached twice (a retry, a second upstream call) keeps its first time; the later one gets a suffix.
  let name = stage;
  for (let n = 2; current.stages.some(([s]) => s === name); n++) name = `${stage}#${n}`;
  current.stages.push([name, Number(now() - current.t0)]);
}

diagnostics.subscribe('http.server.request.start', ({ request }) => {
  // Only the API calls: health checks and the like are not requests the bench measures.
  if (request.method !== 'POST') return;
  current = { t0: now(), start: Date.now(), url: request.url, stages: [['received', 0]] };
  records.push(current);
});
diagnostics.subscribe('undici:client:sendHeaders', () => mark('sent'));
diagnostics.subscribe('undici:request:bodySent', () => mark('body sent'));
diagnostics.subscribe('undici:request:headers', () => mark('upstream headers'));
diagnostics.subscribe('undici:request:trailers', () => mark('upstream done'));
diagnostics.subscribe('relay-gateway:stage', (stage) => mark(String(stage)));
// fastify's handler starting (its body parsed and validated, its hooks run): in both relays alike.
diagnostics.subscribe('tracing:fastify.request.handler:start', () => mark('handler'));
// A response's first body write (an event stream's first event; a JSON answer's end writes its body too): no diagnostics
// channel says when, so the write itself marks it.
const { write: writeBody, end: endBody } = http.ServerResponse.prototype;
http.ServerResponse.prototype.write = function (...args) {
  if (current && !current.wrote) {
    current.wrote = true;
    mark('first write');
  }
  return writeBody.apply(this, args);
};
http.ServerResponse.prototype.end = function (...args) {
  if (current && !current.wrote && args[0] !== undefined && typeof args[0] !== 'function') {
    current.wrote = true;
    mark('first write');
  }
  return endBody.apply(this, args);
};
diagnostics.subscribe('http.server.response.finish', () => {
  mark('answered');
});

function write() {
  if (dir) writeFileSync(join(dir, `stages-${process.pid}.json`), JSON.stringify(records.map(({ t0, start, url, stages }) => ({ t0: String(t0), start, url, stages }))));
}
process.on('exit', write);
// A process that does not handle SIGTERM itself (the bare relay) would die without 'exit': write, then end as it would.
process.on('SIGTERM', () => {
  write();
  if (process.listenerCount('SIGTERM') === 1) process.exit(0);
});
