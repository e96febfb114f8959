// The shipped channel files list the vendors' current models: none past its retirement day (judged by the real date,
// so this fails the day a shipped model retires), the Anthropic and OpenAI ids the ones their official SDKs name, and
// Claude Code's default ids reachable while Anthropic serves them.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../src/compile/load-config.js';
import { resolveModel } from '../src/engine/models.js';
import type { ModelConfig } from '../src/config/types.js';
import { repoRoot } from './kit/gateway.js';

const channelsDir = join(repoRoot, 'channels');
const files = readdirSync(channelsDir).filter((name) => name.endsWith('.yaml'));
const channel = (file: string) => parse(readFileSync(join(channelsDir, file), 'utf8')) as { id: string; models: ModelConfig[] };

/** The string literals of `export type <name> = 'a' | 'b' | ...` in a package's declaration file. */
function literalUnion(pkg: string, declarations: string, name: string): Set<string> {
  const text = readFileSync(join(repoRoot, 'node_modules', pkg, declarations), 'utf8');
  const union = new RegExp(`export type ${name} =([^;]*);`).exec(text)![1];
  return new Set([...union.matchAll(/'([^']+)'/g)].map((m) => m[1]));
}

const idsOf = (models: ModelConfig[]) => models.flatMap((m) => [m.id, ...(m.aliases ?? [])]);

describe('the shipped models', () => {
  it('include none past its retiresAt (today, by the real clock)', () => {
    const today = new Date().toISOString().slice(0, 10);
    const retired = files.flatMap((file) => channel(file).models.filter((m) => m.retiresAt !== undefined && m.retiresAt <= today).map((m) => `${file}: ${m.id} retired on ${m.retiresAt}`));
    expect(retired).toEqual([]);
  });

  it("use Anthropic's ids as the @anthropic-ai/sdk Model type names them", () => {
    const known = literalUnion('@anthropic-ai/sdk', 'resources/messages/messages.d.ts', 'Model');
    expect(known.size).toBeGreaterThan(10);
    expect(idsOf(channel('anthropic.yaml').models).filter((id) => !known.has(id))).toEqual([]);
  });

  it("use OpenAI's chat ids as the openai ChatModel type names them, but for the models newer than the SDK", () => {
    const known = literalUnion('openai', 'resources/shared.d.ts', 'ChatModel');
    // Released 2026-09-22 (channels/openai.yaml cites the pages), after openai 6.49.0's ChatModel was written; `gpt-5.6`
    // is OpenAI's alias of gpt-5.6-sol.
    const newer = new Set(['gpt-6-sol', 'gpt-6-luna', 'gpt-5.6']);
    const chat = channel('openai.yaml').models.filter((m) => m.kind === 'chat');
    expect(idsOf(chat).filter((id) => !known.has(id) && !newer.has(id))).toEqual([]);
    for (const id of newer) expect(known.has(id), `${id} is in ChatModel now: drop it from the list above`).toBe(false);
  });

  it("keep Claude Code's dated small-model id reachable, as an alias of the Anthropic model, while Anthropic serves it", async () => {
    const config = await loadConfig(join(repoRoot, 'config.example.yaml'), { env: { ANTHROPIC_API_KEY: 'k' } });
    const now = Date.now();
    for (const id of ['claude-haiku-4-5-20251001']) {
      const model = config.models.get(config.aliases.get(id)!)![0].model;
      if (model.retiresAt && now >= Date.parse(model.retiresAt)) continue;
      expect(resolveModel(config, id, 'chat', () => now)[0].channel.id).toBe('anthropic');
    }
  });

  // docs/batches.md: under `tasks.batches.relay: priced` (the default) a batch goes to the vendor's batch API only when
  // its models declare price.batch; both vendors bill a batch at half the list price (the channel files cite the pages).
  it.each([
    ['openai.yaml', ['chat', 'embedding', 'moderation']],
    ['anthropic.yaml', ['chat']],
  ])('declare the batch price, half of each list price, on every model %s batches', (file, kinds) => {
    const models = channel(file).models.filter((m) => kinds.includes(m.kind));
    expect(models.length).toBeGreaterThan(0);
    for (const model of models) {
      const { batch, ...list } = model.price as unknown as Record<string, unknown> & { batch?: Record<string, unknown> };
      expect(batch, `${model.id} declares price.batch`).toBeDefined();
      const half = Object.fromEntries(Object.entries(list).map(([k, v]) => [k, typeof v === 'number' ? v / 2 : v]));
      expect(batch, model.id).toEqual(half);
    }
  });
});
