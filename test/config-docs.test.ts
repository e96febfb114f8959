import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderConfigDocs } from '../src/cli/config-docs.js';
import { repoRoot } from './kit/paths.js';

describe('docs/config.md', () => {
  it('matches the schemas (run `npm run docs:config` after changing one)', () => {
    expect(readFileSync(join(repoRoot, 'docs', 'config.md'), 'utf8')).toBe(renderConfigDocs());
  });
});
