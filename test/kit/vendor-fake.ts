// A fake of one vendor's task API, built from a conformance fixture (test/conformance/<protocol>.yaml): the create call,
// the status answers of each phase, an optional result step and the media bytes, as the vendor's reference shows them.
// Each created task runs one scripted scenario, in creation order; the fake records what it answered and was sent.
import type { ServerResponse } from 'node:http';
import { json, type FakeUpstream, type RecordedRequest } from './fake-upstream.js';
import { png } from './media-samples.js';

export type Phase = 'queued' | 'in_progress' | 'completed' | 'failed' | 'filtered';
export type Scenario = 'completed' | 'failed' | 'filtered' | 'throttled' | 'private' | 'refused';

export interface VendorFixture {
  protocol: string;
  /** The channel's baseUrl path on the fake (e.g. /v1). */
  basePath: string;
  /** Header that must carry the credential on every API call of the vendor. */
  authHeader: string;
  /** The channel's model entry (YAML as JSON); its id is what the client asks for. */
  model: { id: string; kind: 'video' | 'image' } & Record<string, unknown>;
  /** The client's request besides `model`; `route` for an image family route (default POST /api/v1/videos). */
  request: Record<string, unknown>;
  route?: string;
  create: { method?: string; path: string; expect?: Record<string, unknown>; headers?: Record<string, string>; answer: unknown };
  poll: { path: string } & Partial<Record<Phase, unknown>>;
  step?: { path: string; answer: unknown };
  media: { path: string; credentialed?: boolean };
  /** What the completed scenario costs (currency units). */
  cost: number;
  failed: { code: string; message?: string };
  filtered?: { code: string; message?: string };
  /** A vendor that refuses in an HTTP 200 (a code in the body): the create answer that refuses, and the task's error. */
  refused?: { answer: unknown; code: string; message?: string };
}

/** The polls each scenario answers, in order (429 and 503 are answered as errors). */
export const scripts: Record<Scenario, (Phase | 429 | 503)[]> = {
  completed: ['queued', 'in_progress', 'completed'],
  failed: ['queued', 'failed'],
  filtered: ['in_progress', 'filtered'],
  throttled: [429, 503, 'in_progress', 'completed'],
  private: ['queued', 'completed'],
  refused: ['failed'],
};

/** A result the kit can recognise: a real MP4 (or PNG) header, then filler numbered by task. */
export function mediaBytes(kind: 'video' | 'image', n: number): Buffer {
  if (kind === 'image') return png(2048 + n);
  const box = Buffer.alloc(4096 + n);
  box.writeUInt32BE(32, 0);
  box.write('ftypisom', 4, 'ascii');
  box.write('isommp42', 16, 'ascii');
  return box;
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const pattern = (template: string) => new RegExp(`^${escapeRegex(template).replace(/\\\{\\\{ n \\\}\\\}/g, '(\\d+)')}$`);

/** The fixture's values with `{{ n }}` (the task's number), `{{ origin }}` (the fake) and `{{ media }}` (where media is) filled in. */
export function fill(value: unknown, vars: Record<string, string>): unknown {
  if (typeof value === 'string') return value.replace(/\{\{ (n|origin|media) \}\}/g, (_, name: string) => vars[name]);
  if (Array.isArray(value)) return value.map((v) => fill(v, vars));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, vars)]));
  return value;
}

export interface VendorFake {
  /** The scenario the next created task runs. */
  next: Scenario;
  creates: number;
  /** Per task number: its scenario, the phases and errors answered, media and step requests. */
  tasks: Map<number, { scenario: Scenario; answered: (Phase | number)[]; media: number; steps: number }>;
  /** Requests the fake refused: no credential, a step header where it does not belong, an unexpected body. */
  problems: string[];
  /** Bodies of the create calls. */
  bodies: unknown[];
}

export function installVendorFake(upstream: FakeUpstream, fixture: VendorFixture): VendorFake {
  const fake: VendorFake = { next: 'completed', creates: 0, tasks: new Map(), problems: [], bodies: [] };
  const auth = fixture.authHeader.toLowerCase();
  const vars = (n: number, scenario: Scenario) => ({ n: String(n), origin: upstream.url, media: scenario === 'private' ? 'https://10.0.0.1' : upstream.url });
  const poll = pattern(fixture.poll.path);
  const step = fixture.step && pattern(fixture.step.path);
  const media = pattern(fixture.media.path);
  const refuse = (res: ServerResponse, problem: string) => (fake.problems.push(problem), json(res, 400, { error: { message: problem } }), true);
  const stepHeaders = Object.keys(fixture.create.headers ?? {}).map((h) => h.toLowerCase());

  upstream.route(async (req: RecordedRequest, res: ServerResponse) => {
    const isMedia = req.method === 'GET' && media.exec(req.path);
    if (isMedia) {
      const task = fake.tasks.get(Number(isMedia[1]));
      if (!task) return false;
      if (!fixture.media.credentialed && req.headers[auth]) return refuse(res, 'the credential was sent with a media download');
      if (fixture.media.credentialed && !req.headers[auth]) return refuse(res, 'a credentialed media download came without the credential');
      task.media++;
      const bytes = mediaBytes(fixture.model.kind, Number(isMedia[1]));
      res.writeHead(200, { 'content-type': fixture.model.kind === 'image' ? 'image/png' : 'video/mp4', 'content-length': String(bytes.length) });
      res.end(bytes);
      return true;
    }
    if (!req.headers[auth]) return refuse(res, `${req.method} ${req.path} came without the ${auth} header`);
    if (req.method === (fixture.create.method ?? 'POST') && req.path === fixture.create.path) {
      for (const [name, value] of Object.entries(fixture.create.headers ?? {})) if (req.headers[name.toLowerCase()] !== value) return refuse(res, `create came without ${name}: ${value}`);
      const n = ++fake.creates;
      fake.bodies.push(req.body);
      fake.tasks.set(n, { scenario: fake.next, answered: [], media: 0, steps: 0 });
      json(res, 200, fill(fake.next === 'refused' && fixture.refused ? fixture.refused.answer : fixture.create.answer, vars(n, fake.next)));
      return true;
    }
    for (const header of stepHeaders) if (req.headers[header]) return refuse(res, `${req.method} ${req.path} carried the create-only header ${header}`);
    const stepMatch = req.method === 'GET' && step?.exec(req.path);
    if (stepMatch && fixture.step) {
      const task = fake.tasks.get(Number(stepMatch[1]));
      if (!task) return false;
      task.steps++;
      json(res, 200, fill(fixture.step.answer, vars(Number(stepMatch[1]), task.scenario)));
      return true;
    }
    const pollMatch = req.method === 'GET' && poll.exec(req.path);
    if (!pollMatch) return false;
    const n = Number(pollMatch[1]);
    const task = fake.tasks.get(n);
    if (!task) return json(res, 404, { error: { message: 'no such task' } }), true;
    const script = scripts[task.scenario];
    const phase = script[Math.min(task.answered.length, script.length - 1)];
    task.answered.push(phase);
    if (phase === 429) return json(res, 429, { error: { message: 'slow down' } }, { 'retry-after': '0' }), true;
    if (phase === 503) return json(res, 503, { error: { message: 'overloaded' } }), true;
    json(res, 200, fill(fixture.poll[phase], vars(n, task.scenario)));
    return true;
  });
  return fake;
}
