// Folders of src/ import downward only (docs/architecture.md, "Layers"): a folder imports folders of its own layer or
// below, and no two folders import each other both ways. Edges come from every import and export statement of
// src/**/*.ts, type-only ones included; the top-level files of src/ count as the folder "root".
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = join(import.meta.dirname, '..', 'src');

/** The layer order, lowest first: a folder may import folders of its own layer or below, never above. */
export const LAYERS = [
  ['base'],
  ['config', 'net', 'http'],
  ['store'],
  ['engine', 'billing', 'auth', 'files', 'request-logs', 'guardrails'],
  ['telemetry', 'pipeline', 'flows', 'evaluate', 'tasks', 'batches', 'webhooks', 'compile', 'mcp', 'cache'],
  ['endpoints', 'admin', 'dashboard'],
  ['root'],
  ['cli'],
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

  it('has every folder import only its own layer or below', () => {
    const rank = new Map(LAYERS.flatMap((layer, i) => layer.map((folder) => [folder, i] as const)));
    const upward = [...folderEdges()].filter(([edge]) => {
      const [from, to] = edge.split('->') as [string, string];
      return (rank.get(from) ?? -1) < (rank.get(to) ?? -1);
    });
    expect(Object.fromEntries(upward)).toEqual({});
  });

  it('has no two folders of src/ importing each other both ways', () => {
    expect(twoWayPairs()).toEqual({});
  });

  it('ranks every folder of src/ in the layer order', () => {
    const folders = new Set([...folderEdges().keys()].flatMap((edge) => edge.split('->')));
    expect([...folders].filter((folder) => !LAYERS.flat().includes(folder))).toEqual([]);
  });
});
