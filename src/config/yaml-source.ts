// Parses a YAML file keeping node positions, so any JSON pointer into it can be reported as file:line:col.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { LineCounter, isMap, isPair, isScalar, parseDocument, type Document } from 'yaml';

export interface YamlSource {
  file: string;
  value: unknown;
  /** `file:line:col` of the node at `pointer`, or of its key when `key` names a child. */
  locate(pointer: string, key?: string): string;
  /** Errors found while parsing, already formatted with positions. */
  syntaxErrors: string[];
}

export function displayPath(file: string): string {
  const rel = relative(process.cwd(), file);
  return rel.startsWith('..') ? file : rel;
}

function pointerSegments(pointer: string): (string | number)[] {
  if (pointer === '' || pointer === '/') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

export function readYamlSource(file: string, text = readFileSync(file, 'utf8')): YamlSource {
  const lineCounter = new LineCounter();
  const doc: Document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const shown = displayPath(file);
  const at = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset);
    return `${shown}:${line}:${col}`;
  };
  const syntaxErrors = [...doc.errors, ...doc.warnings].map(
    (e) => `${at(e.pos[0])} / YAML ${e.code === 'DUPLICATE_KEY' ? 'duplicate key' : 'syntax error'}: ${e.message.split('\n')[0]}`,
  );
  return {
    file,
    value: syntaxErrors.length ? undefined : doc.toJS(),
    syntaxErrors,
    locate(pointer, key) {
      const segments = pointerSegments(pointer);
      let node: unknown = segments.length ? doc.getIn(segments, true) : doc.contents;
      // Walk back to the nearest ancestor that exists (a missing property reports its parent).
      while (!node && segments.length) {
        segments.pop();
        node = segments.length ? doc.getIn(segments, true) : doc.contents;
      }
      if (key !== undefined && isMap(node)) {
        const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === key);
        if (pair && isScalar(pair.key) && pair.key.range) return at(pair.key.range[0]);
      }
      const range = (node as { range?: [number, number, number] } | null)?.range;
      return range ? at(range[0]) : `${shown}:1:1`;
    },
  };
}
