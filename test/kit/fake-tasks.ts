// Fake task APIs on a FakeUpstream: OpenAI's videos (create, status, content) and a Runway-shaped one (upper-case
// statuses, progress as a fraction, the result URL in `output`), each scriptable: progress steps, failure, 404s, 429s, result size.
import type { ServerResponse } from 'node:http';
import { json, type FakeUpstream } from './fake-upstream.js';
import { png } from './media-samples.js';

export interface TaskScript {
  /** Progress (percent) each poll reports before the task finishes; one poll per entry. */
  steps: number[];
  /** How the task ends once its steps are done. */
  outcome: 'completed' | 'failed';
  /** Size of the result in bytes (a real MP4 or PNG header, then filler), streamed with backpressure. */
  resultBytes: number;
  /** The first this-many polls of each task answer 404. */
  notFound: number;
  /** The first this-many polls of each task answer 429 with retry-after. */
  rateLimited: number;
  /** Each poll answers after this long (to see whether polls of one task ever overlap). */
  pollDelayMs: number;
  /** Status words the poll reports while running (an unknown word tests the fallback). */
  runningWord?: string;
  /** Seconds the upstream reports having made (OpenAI videos). */
  seconds?: string;
  /** Runway-shaped: the result URL to report instead of the fake's own. */
  outputUrl?: string;
}

export interface FakeTasks {
  script: TaskScript;
  /** Upstream task id -> polls answered so far. */
  polls: Map<string, number>;
  /** Most polls of one task in flight at once, over the fake's life. */
  maxConcurrentPolls: number;
  /** Requests that created tasks. */
  creates: number;
  /** Times a result was downloaded. */
  downloads: number;
  /**
   * Starts over on `script` (over the install's defaults), with no polls, creates or downloads counted: the next test on
   * a fake upstream that several tests share. Tasks created before are still answered, under the new script.
   */
  rescript(script?: Partial<TaskScript>): void;
}

const mp4Header = () => {
  const box = Buffer.alloc(32);
  box.writeUInt32BE(32, 0);
  box.write('ftyp', 4, 'ascii');
  box.write('isom', 8, 'ascii');
  box.write('isommp42', 16, 'ascii');
  return box;
};

/** Streams `total` bytes (header first) in 64 KiB chunks, waiting for drain, so the fake holds no more than one chunk. */
async function streamResult(res: ServerResponse, header: Buffer, total: number, contentType: string): Promise<void> {
  res.writeHead(200, { 'content-type': contentType, 'content-length': String(total) });
  const chunk = Buffer.alloc(64 * 1024);
  let sent = 0;
  const write = (buf: Buffer) => (res.write(buf) ? Promise.resolve() : new Promise<void>((resolve) => res.once('drain', resolve)));
  const first = header.subarray(0, Math.min(header.length, total));
  await write(first);
  sent += first.length;
  while (sent < total && !res.destroyed) {
    const slice = chunk.subarray(0, Math.min(chunk.length, total - sent));
    await write(slice);
    sent += slice.length;
  }
  res.end();
}

/** A task API's state; `defaults` are the protocol's, `script` the test's. */
function tracker(defaults: Partial<TaskScript>, script: Partial<TaskScript>): FakeTasks & { inFlight: Map<string, number> } {
  const scripted = (s: Partial<TaskScript>): TaskScript => ({ steps: [30, 70], outcome: 'completed', resultBytes: 4096, notFound: 0, rateLimited: 0, pollDelayMs: 0, ...defaults, ...s });
  const fake = {
    script: scripted(script),
    polls: new Map<string, number>(),
    inFlight: new Map<string, number>(),
    maxConcurrentPolls: 0,
    creates: 0,
    downloads: 0,
    rescript(next: Partial<TaskScript> = {}) {
      fake.script = scripted(next);
      fake.polls.clear();
      fake.maxConcurrentPolls = 0;
      fake.creates = 0;
      fake.downloads = 0;
    },
  };
  return fake;
}

/** Answers one poll of `id` with `answer(step)` after the scripted faults; returns false once a fault answered instead. */
async function poll(fake: FakeTasks & { inFlight: Map<string, number> }, id: string, res: ServerResponse, answer: (n: number) => unknown): Promise<void> {
  const n = fake.polls.get(id) ?? 0;
  fake.polls.set(id, n + 1);
  const inFlight = (fake.inFlight.get(id) ?? 0) + 1;
  fake.inFlight.set(id, inFlight);
  fake.maxConcurrentPolls = Math.max(fake.maxConcurrentPolls, inFlight);
  try {
    if (fake.script.pollDelayMs) await new Promise((r) => setTimeout(r, fake.script.pollDelayMs));
    if (n < fake.script.notFound) return json(res, 404, { error: { message: 'not found' } });
    if (n < fake.script.notFound + fake.script.rateLimited) return json(res, 429, { error: { message: 'slow down' } }, { 'retry-after': '0' });
    json(res, 200, answer(n - fake.script.notFound - fake.script.rateLimited));
  } finally {
    fake.inFlight.set(id, fake.inFlight.get(id)! - 1);
  }
}

/** POST .../videos, GET .../videos/{id}, GET .../videos/{id}/content, shaped as OpenAI's video API. */
export function installOpenAIVideos(upstream: FakeUpstream, script: Partial<TaskScript> = {}): FakeTasks {
  const fake = tracker({}, script);
  let next = 0;
  upstream.route(async (req, res) => {
    if (req.method === 'POST' && /\/videos$/.test(req.path)) {
      fake.creates++;
      const field = (name: string) => new RegExp(`name="${name}"\\r\\n\\r\\n([^\\r]*)`).exec(req.raw.toString('latin1'))?.[1];
      const body = req.body && typeof req.body === 'object' ? req.body : { model: field('model'), prompt: field('prompt'), seconds: field('seconds'), size: field('size') };
      const id = `video_up_${++next}`;
      json(res, 200, { id, object: 'video', status: 'queued', progress: 0, model: body.model, seconds: body.seconds ?? '4', size: body.size ?? '720x1280', created_at: 1_700_000_000 });
      return true;
    }
    const content = /\/videos\/([^/]+)\/content$/.exec(req.path);
    if (req.method === 'GET' && content) {
      fake.downloads++;
      await streamResult(res, mp4Header(), fake.script.resultBytes, 'video/mp4');
      return true;
    }
    const status = /\/videos\/([^/?]+)$/.exec(req.path);
    if (req.method === 'GET' && status) {
      const id = status[1];
      await poll(fake, id, res, (n) => {
        const base = { id, object: 'video', model: 'sora-2', seconds: fake.script.seconds ?? '4', size: '720x1280', created_at: 1_700_000_000 };
        if (n < fake.script.steps.length) return { ...base, status: fake.script.runningWord ?? 'in_progress', progress: fake.script.steps[n] };
        if (fake.script.outcome === 'failed') return { ...base, status: 'failed', progress: 0, error: { code: 'moderation_blocked', message: 'The prompt was refused.' } };
        return { ...base, status: 'completed', progress: 100 };
      });
      return true;
    }
    return false;
  });
  return fake;
}

/** POST .../text_to_image, .../text_to_video and .../image_to_video, GET .../tasks/{id}, and GET /outputs/{id} serving the results. */
export function installRunwayTasks(upstream: FakeUpstream, script: Partial<TaskScript> = {}): FakeTasks {
  const fake = tracker({ resultBytes: 2048 }, script);
  const kinds = new Map<string, 'image' | 'video'>();
  let next = 0;
  upstream.route(async (req, res) => {
    const create = /\/(text_to_image|image_to_video|text_to_video)$/.exec(req.path);
    if (req.method === 'POST' && create) {
      fake.creates++;
      const id = `0000-task-${++next}`;
      kinds.set(id, create[1] === 'text_to_image' ? 'image' : 'video');
      json(res, 200, { id });
      return true;
    }
    const output = /^\/outputs\/([^/]+)$/.exec(req.path);
    if (req.method === 'GET' && output) {
      fake.downloads++;
      const image = kinds.get(output[1]) === 'image';
      await streamResult(res, image ? png() : mp4Header(), Math.max(fake.script.resultBytes, image ? png().length : 32), image ? 'image/png' : 'video/mp4');
      return true;
    }
    const status = /\/tasks\/([^/?]+)$/.exec(req.path);
    if (req.method === 'GET' && status) {
      const id = status[1];
      await poll(fake, id, res, (n) => {
        const base = { id, createdAt: '2026-01-01T00:00:00.000Z' };
        if (n === 0) return { ...base, status: 'PENDING' };
        if (n <= fake.script.steps.length) return { ...base, status: fake.script.runningWord ?? 'RUNNING', progress: fake.script.steps[n - 1] / 100 };
        if (fake.script.outcome === 'failed') return { ...base, status: 'FAILED', failure: 'Content moderation', failureCode: 'SAFETY.INPUT.TEXT' };
        return { ...base, status: 'SUCCEEDED', output: [fake.script.outputUrl ?? `${upstream.url}/outputs/${id}`] };
      });
      return true;
    }
    return false;
  });
  return fake;
}
