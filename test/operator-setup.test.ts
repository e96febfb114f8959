// What a container deployment carries of the operator's setup (issue 49): every variable a shipped channel reads is in
// deploy/env.example (the .env compose passes whole), and compose mounts the operator's overlay folder read-only.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './kit/paths.js';

/** The variables a channel file reads: `${VAR}` in its values and its credential's `env` / `...Env` fields. */
function variablesRead(text: string): string[] {
  return [...text.matchAll(/\$\{([A-Z0-9_]+)|(?:\benv|\w+Env): *([A-Z0-9_]+)/g)].map((m) => m[1] ?? m[2]);
}

const channelsDir = join(repoRoot, 'channels');
const channelVariables = new Set(readdirSync(channelsDir).filter((f) => f.endsWith('.yaml')).flatMap((f) => variablesRead(readFileSync(join(channelsDir, f), 'utf8'))));
const example = readFileSync(join(repoRoot, 'deploy', 'env.example'), 'utf8');
const listed = new Set([...example.matchAll(/^#? ?([A-Z0-9_]+)=/gm)].map((m) => m[1]));

describe('compose carries the operator setup', () => {
  it('lists every variable the shipped channels read in deploy/env.example, and none they do not', () => {
    expect(channelVariables.size).toBeGreaterThan(20);
    expect([...channelVariables].filter((v) => !listed.has(v))).toEqual([]);
    expect([...listed].filter((v) => !channelVariables.has(v))).toEqual([]);
  });

  it('passes every variable of deploy/env.example to both replicas and mounts ./overlay read-only as GATEWAY_OVERLAY_DIR', () => {
    const compose = parse(readFileSync(join(repoRoot, 'compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, { env_file?: { path: string }[]; environment?: Record<string, string | null>; volumes?: string[] }> };
    for (const name of ['gateway-a', 'gateway-b']) {
      const service = compose.services[name];
      // Passed through without a value (null in the mapping): from the shell or .env, unset when neither has it.
      for (const name of listed) expect(service.environment).toHaveProperty(name, null);
      expect(service.environment?.GATEWAY_OVERLAY_DIR).toBe('/overlay');
      expect(service.volumes).toContain('./overlay:/overlay:ro');
    }
  });
});
