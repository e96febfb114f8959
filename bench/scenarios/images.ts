// Benchmark: archiving a 25 MiB generated image (a result URL streamed through the SSRF guard into the file store),
// with the gateway's peak RSS growth while it does, against a plain download of the same URL in the same run.
import { FakeUpstream } from '../../test/kit/fake-upstream.js';
import { installImages } from '../../test/kit/fake-images.js';
import { startGateway } from '../../test/kit/gateway.js';
import { png } from '../../test/kit/media-samples.js';

export const name = 'images';

const MiB = 1024 * 1024;

/** Runs `work` while sampling RSS every 2 ms; returns its result, the time it took and the peak growth over the RSS before. */
async function measured<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; peakGrowthMiB: number }> {
  globalThis.gc?.();
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 2);
  const started = performance.now();
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { result, ms: performance.now() - started, peakGrowthMiB: (peak - before) / MiB };
  } finally {
    clearInterval(timer);
  }
}

export async function run(): Promise<Record<string, number | string>> {
  const fake = await FakeUpstream.start();
  const script = installImages(fake);
  script.image = png(25 * MiB);
  const gw = await startGateway({ channels: { images: `id: images\nprotocol: openai-chat\nbaseUrl: ${fake.url}/v1\nmodels:\n  - id: bench-image\n    kind: image\n    price: { perImage: 0.01 }\n` }, extraConfig: `network:\n  allowHosts: ["${new URL(fake.url).host}"]\n` });
  try {
    const generate = () => gw.app.inject({ method: 'POST', url: '/v1/images/generations', headers: { authorization: `Bearer ${gw.key}` }, payload: { model: 'bench-image', prompt: 'x' } });
    await generate(); // warm
    // Archive first: the direct download below holds the whole image, which would raise the baseline after it.
    const archived = await measured(async () => (await generate()).json().data[0].archive_status as string);
    const direct = await measured(async () => {
      let bytes = 0;
      for await (const chunk of (await fetch(`${fake.url}/generated/0.png`)).body!) bytes += chunk.length;
      return bytes;
    });
    if (archived.result !== 'archived') throw new Error(`archive ${archived.result}`);
    return {
      'image bytes': script.image.length,
      'direct download ms': Math.round(direct.ms),
      'generate + archive ms': Math.round(archived.ms),
      'archive / direct time': Number((archived.ms / direct.ms).toFixed(2)),
      'peak RSS growth while archiving MiB (target < 8)': Number(archived.peakGrowthMiB.toFixed(1)),
    };
  } finally {
    await gw.close();
    await fake.close();
  }
}

// `tsx bench/scenarios/images.ts` runs this scenario alone.
if (import.meta.url === `file://${process.argv[1]}`) console.log(await run());
