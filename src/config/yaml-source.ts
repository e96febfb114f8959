// Parses a YAML file keeping node positions, so any JSON pointer into it can be reported as file:line:col.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { CORE_SCHEMA, load } from 'js-yaml';
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

/**
 * Values of YAML texts already parsed, by their text: every load (a start, a reload, each test gateway of a process) reads
 * the same shipped protocol, catalogue and fixture files again, and parsing them is most of a load's time. Keyed by the
 * text alone, so an edited file is a new entry; a value is handed out as a copy, never shared between loads. Bounded by
 * the texts' characters, oldest first out (the shipped files are about 0.3 M characters). Only texts that parse without
 * errors are kept; positions (locate) parse the text again, on the first call, since they are wanted only for a problem.
 * A serving process stops keeping them once it listens (keepParsedTexts(false)): a reload, rare, parses again rather
 * than every worker holding the texts and their values for its life (issue 52).
 */
const parsedTexts = new Map<string, unknown>();
const PARSED_TEXTS_MAX_CHARS = 4 * 1024 * 1024;
let parsedTextsChars = 0;
let keeping = true;
/** Other caches of parsed YAML (the mapping fixtures' files) that follow the same switch. */
const followers: { forget(): void }[] = [];

/** Whether texts parsed from now on are kept (the default); false also forgets those kept so far, here and in followers. */
export function keepParsedTexts(keep: boolean): void {
  keeping = keep;
  if (keep) return;
  parsedTexts.clear();
  parsedTextsChars = 0;
  for (const follower of followers) follower.forget();
}

/** Whether parsed texts are being kept (a follower keeps its own only then). */
export const keepingParsedTexts = (): boolean => keeping;

/** Registers a cache of parsed YAML to empty when keepParsedTexts(false) is called. */
export function followParsedTexts(forget: () => void): void {
  followers.push({ forget });
}

function remember(text: string, value: unknown): void {
  if (!keeping || text.length > PARSED_TEXTS_MAX_CHARS / 4) return;
  parsedTexts.set(text, value);
  parsedTextsChars += text.length;
  for (const [oldest] of parsedTexts) {
    if (parsedTextsChars <= PARSED_TEXTS_MAX_CHARS) break;
    parsedTexts.delete(oldest);
    parsedTextsChars -= oldest.length;
  }
}

function parse(text: string): { doc: Document; lineCounter: LineCounter } {
  const lineCounter = new LineCounter();
  return { doc: parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true }), lineCounter };
}

const NULL_KEY = /(^|[\s{,?-])(~|null|Null|NULL)\s*:(\s|$)/m;

/**
 * A text's value by js-yaml, about three times faster than yaml's document (parsing was most of a fresh process's config
 * load), with the same YAML 1.2 core schema. Undefined when js-yaml refuses the text (a syntax error, a duplicate key, an
 * unknown tag, an empty or multi-document file): yaml then parses it and reports what is wrong at its position. Both parse
 * every shipped file to the same value (test/yaml-source.test.ts).
 */
function fastValue(text: string): { value: unknown } | undefined {
  // The one value they differ on: a null key (`~:`, `null:`) is "" to yaml and "null" to js-yaml.
  if (NULL_KEY.test(text)) return undefined;
  try {
    return { value: load(text, { schema: CORE_SCHEMA }) };
  } catch {
    return undefined;
  }
}

export function readYamlSource(file: string, text = readFileSync(file, 'utf8')): YamlSource {
  const shown = displayPath(file);
  const fast = parsedTexts.has(text) ? undefined : fastValue(text);
  let parsed = parsedTexts.has(text) || fast ? undefined : parse(text);
  const positions = () => (parsed ??= parse(text));
  const at = (offset: number) => {
    const { line, col } = positions().lineCounter.linePos(offset);
    return `${shown}:${line}:${col}`;
  };
  let value: unknown;
  let syntaxErrors: string[] = [];
  if (parsed) {
    const { doc } = parsed;
    syntaxErrors = [...doc.errors, ...doc.warnings].map(
      (e) => `${at(e.pos[0])} / YAML ${e.code === 'DUPLICATE_KEY' ? 'duplicate key' : 'syntax error'}: ${e.message.split('\n')[0]}`,
    );
    if (!syntaxErrors.length) {
      value = doc.toJS();
      if (keeping) remember(text, structuredClone(value));
    }
  } else if (fast) {
    value = fast.value;
    if (keeping) remember(text, structuredClone(value));
  } else {
    value = structuredClone(parsedTexts.get(text));
  }
  return {
    file,
    value,
    syntaxErrors,
    locate(pointer, key) {
      const { doc } = positions();
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
