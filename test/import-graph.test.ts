// The import graph of src/ and the test kit has no circle: interfaces live in their own files, and modules take narrow dependencies.
import { join } from 'node:path';
import madge from 'madge';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');

describe('import graph', () => {
  it('has no circular import in src or test', async () => {
    const graph = await madge([join(root, 'src'), join(root, 'test')], { fileExtensions: ['ts'], baseDir: root });
    expect(graph.circular()).toEqual([]);
    // madge parses every file of src/ and test/ with TypeScript: CPU alone, 15 s idle and over 30 s on a busy machine.
  }, 120_000);
});
