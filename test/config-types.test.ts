import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderConfigTypes } from '../src/cli/config-types.js';
import { repoRoot } from './kit/paths.js';

describe('src/config/generated/config-types.ts', () => {
  it('matches the schemas (run `npm run gen:types` after changing one)', async () => {
    expect(readFileSync(join(repoRoot, 'src', 'config', 'generated', 'config-types.ts'), 'utf8')).toBe(await renderConfigTypes());
  });
});
