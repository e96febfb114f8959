// Folders of src/ import downward only: no two folders import each other both ways (docs/architecture.md, "Layers").
// Edges come from every import and export statement of src/**/*.ts, type-only ones included; the top-level files of
// src/ count as the folder "root". PAIRS_LEFT lists the pairs not untangled yet: the list only shrinks.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = join(import.meta.dirname, '..', 'src');

/**
 * The layer order, lowest first: a folder may import folders of its own layer or below. `root` is split by file in
 * docs/architecture.md (errors.ts at the bottom, app.ts, services.ts and main.ts at the top), so it is not ranked here.
 */
export const LAYERS = [
  ['config', 'net', 'http'],
  ['store', 'compile'],
  ['engine', 'billing', 'auth', 'files', 'request-logs'],
  ['telemetry', 'pipeline', 'dialects', 'evaluate', 'tasks', 'webhooks'],
  ['endpoints', 'admin', 'dashboard'],
  ['cli'],
];

/** Pairs that still import each other both ways (the list only shrinks). */
const PAIRS_LEFT = [
  'admin<->dashboard',
  'admin<->root',
  'auth<->billing',
  'auth<->dashboard',
  'auth<->root',
  'billing<->compile',
  'billing<->config',
  'billing<->root',
  'billing<->store',
  'compile<->engine',
  'compile<->pipeline',
  'compile<->root',
  'config<->root',
  'dashboard<->root',
  'endpoints<->pipeline',
  'endpoints<->root',
  'engine<->root',
  'files<->root',
  'http<->root',
  'net<->root',
  'pipeline<->telemetry',
  'root<->tasks',
  'root<->telemetry',
];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const folderOf = (path: string) => {
  const parts = relative(src, path).split(/[\\/]/);
  return parts.length === 1 ? 'root' : parts[0]!;
};

const SPECIFIER = /(?:import|export)\s[^;'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

/** Folder-to-folder edges, each with the first import that makes it. */
export function folderEdges(): Map<string, string> {
  const edges = new Map<string, string>();
  for (const file of sources(src)) {
    for (const match of readFileSync(file, 'utf8').matchAll(SPECIFIER)) {
      const target = resolve(dirname(file), match[1] ?? match[2]!);
      if (relative(src, target).startsWith('..')) continue;
      const [from, to] = [folderOf(file), folderOf(target)];
      if (from !== to && !edges.has(`${from}->${to}`)) edges.set(`${from}->${to}`, `${relative(src, file)} -> ${relative(src, target)}`);
    }
  }
  return edges;
}

/** Pairs of folders that import each other both ways, as `a<->b` (a before b), each with an import of each way. */
export function twoWayPairs(edges = folderEdges()): Record<string, string[]> {
  const pairs: Record<string, string[]> = {};
  for (const [edge, via] of edges) {
    const [a, b] = edge.split('->') as [string, string];
    const back = edges.get(`${b}->${a}`);
    if (a < b && back) pairs[`${a}<->${b}`] = [via, back];
  }
  return pairs;
}

describe('folder layers', () => {
  it('finds edges in type-only imports too', () => {
    expect(folderEdges().size).toBeGreaterThan(20);
  });

  it('has no two folders of src/ importing each other both ways', () => {
    const pairs = twoWayPairs();
    const fresh = Object.fromEntries(Object.entries(pairs).filter(([pair]) => !PAIRS_LEFT.includes(pair)));
    expect(fresh).toEqual({});
    const gone = PAIRS_LEFT.filter((pair) => !(pair in pairs));
    expect(gone, 'untangled: remove these from PAIRS_LEFT').toEqual([]);
  });

  it('ranks every folder of src/ in the layer order', () => {
    const folders = new Set([...folderEdges().keys()].flatMap((edge) => edge.split('->')));
    folders.delete('root');
    expect([...folders].filter((folder) => !LAYERS.flat().includes(folder))).toEqual([]);
  });
});
