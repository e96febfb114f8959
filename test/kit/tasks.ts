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
export async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > until) throw new Error(`timed out waiting; last: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 15));
  }
}
