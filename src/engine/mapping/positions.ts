// Turns a mapping problem (JSON pointer, plus an offset into its scalar or one of its keys) into `file:line:col /pointer message`.
import { readFileSync } from 'node:fs';
import { isMap, isPair, isScalar, LineCounter, parseDocument, type Node as YamlNode } from 'yaml';
import { displayPath } from '../../config/yaml-source.js';
import type { MappingProblem } from './compile.js';

const segments = (pointer: string) =>
  pointer === '' ? [] : pointer.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')).map((s) => (/^\d+$/.test(s) ? Number(s) : s));

/** Where `offset` of a scalar's value lies in its source text: found by the text around it, so quoting and indentation do not matter. */
function offsetInSource(raw: string, value: string, offset: number): number | undefined {
  let needle = value.slice(offset, offset + 40).split('\n')[0];
  let shift = 0;
  if (!needle) {
    needle = value.slice(Math.max(0, offset - 20), offset).split('\n').pop() ?? '';
    shift = needle.length;
  }
  if (!needle) return undefined;
  let before = 0;
  for (let i = value.indexOf(needle); i >= 0 && i < offset - shift; i = value.indexOf(needle, i + 1)) before++;
  let at = -1;
  for (let n = 0; n <= before; n++) {
    at = raw.indexOf(needle, at + 1);
    if (at < 0) return undefined;
  }
  return at + shift;
}

/** Formats problems of one YAML file; the file is parsed again only when there are problems to place. */
export function locateProblems(file: string, problems: MappingProblem[], text = readFileSync(file, 'utf8')): string[] {
  if (!problems.length) return [];
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, keepSourceTokens: false });
  const at = (offset: number) => {
    const { line, col } = lineCounter.linePos(offset);
    return `${displayPath(file)}:${line}:${col}`;
  };
  return problems.map((p) => {
    const path = segments(p.pointer);
    let node = (path.length ? doc.getIn(path, true) : doc.contents) as YamlNode | null | undefined;
    while (!node && path.length) {
      path.pop();
      node = (path.length ? doc.getIn(path, true) : doc.contents) as YamlNode | null | undefined;
    }
    let position = node?.range ? node.range[0] : 0;
    if (p.key !== undefined && isMap(node)) {
      const pair = node.items.find((item) => isPair(item) && isScalar(item.key) && String(item.key.value) === p.key);
      if (pair && isScalar(pair.key) && pair.key.range) position = pair.key.range[0];
    } else if (p.offset !== undefined && isScalar(node) && typeof node.value === 'string' && node.range) {
      const inner = offsetInSource(text.slice(node.range[0], node.range[1]), node.value, p.offset);
      if (inner !== undefined) position = node.range[0] + inner;
    }
    return `${at(position)} ${p.pointer || '/'} ${p.message}`;
  });
}
