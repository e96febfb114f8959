// Helpers for task suites: the config that makes the runner fast, and waiting for a task to reach a state through the API.
import type { FakeUpstream } from './fake-upstream.js';

/** Fast polls, short leases; the fake upstream's address allowed for result URLs (plain http on loopback). */
export function tasksConfig(fake: FakeUpstream, extra = ''): string {
  const host = new URL(fake.url).host;
  const tick = extra.includes('tickMilliseconds') ? '' : '  tickMilliseconds: 10\n';
  return `tasks:\n${tick}  leaseSeconds: 1\n  poll: { firstSeconds: 0.01, maxSeconds: 0.03 }\n${extra}network:\n  allowHosts: ["${host}"]\n`;
}

/** A video channel on the OpenAI-compatible videos protocol: sora-2 at 0.10 USD a second, at most 12 seconds. */
export function openaiVideoChannel(baseUrl: string): string {
  return `id: oa-video
protocol: openai-videos
baseUrl: ${baseUrl}/v1
models:
  - id: sora-2
    kind: video
    media: { maxSeconds: 12 }
    price: { perVideoSecond: 0.10 }
`;
}

/** A channel on the Runway-shaped protocol: an image model for the family route and a video model. */
export function runwayChannel(baseUrl: string): string {
  return `id: rw
protocol: runway-tasks
baseUrl: ${baseUrl}/v1
models:
  - id: gen4-image
    upstream: gen4_image
    kind: image
    price: { perImage: { "1920x1080": 0.08, "1024x1024": 0.05 } }
  - id: gen4-video
    upstream: gen4_turbo
    kind: video
    media: { maxSeconds: 10 }
    price: { perVideoSecond: 0.05 }
`;
}

/** Reads the task until `done` says so (the API is the only way a client learns), failing after `ms`. */
/**
 * A minimal task protocol (`clips`: POST /clips, GET /clips/{id} with `state` working/done/error and `url`) and its
 * channel on `baseUrl`, model `clip-1`: for tests of the runner's own behaviour rather than of a vendor.
 * `pollExtra` adds lines to the poll step, `channelExtra` to the channel.
 */
export function clipsChannels(baseUrl: string, options: { pollExtra?: string; channelExtra?: string } = {}): Record<string, string> {
  const protocol = `id: clips
operations:
  create: { path: /clips }
  clip: { method: GET, path: "/clips/{{ upstream_id }}", encoding: none }
tasks:
  video:
    kind: video
    submit: { operation: create, request: { prompt: "{{ body.prompt }}" }, id: "{{ answer.id }}" }
    poll:
      operation: clip
      status: "{{ answer.state }}"
      statusMap: { working: in_progress, done: completed, error: failed }
${options.pollExtra ?? ''}    result: { url: "{{ answer.url }}" }
`;
  const channel = `id: clips\nprotocol: clips\nbaseUrl: ${baseUrl}\n${options.channelExtra ?? ''}models:\n  - id: clip-1\n    kind: video\n    media: { maxSeconds: 8 }\n    price: { perVideoSecond: 0.1 }\n`;
  return { 'protocols/clips.yaml': protocol, clips: channel };
}

export async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`timed out waiting; last: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}
