// Config YAML is read by js-yaml where it parses there (the fast path) and by yaml's positioned document where it does
// not: the two must agree on every value, and every mistake must still be reported at its line and column.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { readYamlSource } from '../src/config/yaml-source.js';
import { repoRoot } from './kit/paths.js';

/** Every YAML file the repository ships to operators: channels, protocols and their fixtures, the catalogue, configs. */
function shippedYaml(): string[] {
  const under = (dir: string) =>
    readdirSync(join(repoRoot, dir), { recursive: true })
      .map(String)
      .filter((f) => /\.ya?ml$/.test(f))
      .map((f) => join(repoRoot, dir, f));
  return [...under('channels'), ...under('catalogue'), ...under('demo'), join(repoRoot, 'config.example.yaml')];
}

/** What yaml's positioned document makes of a text (the reference the fast path must match). */
const reference = (text: string) => parseDocument(text, { uniqueKeys: true }).toJS();

describe('config YAML', () => {
  it('reads every shipped file to the value yaml gives it', () => {
    const files = shippedYaml();
    expect(files.length).toBeGreaterThan(60);
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const source = readYamlSource(file, `${text}\n# ${file}`);
      expect(source.syntaxErrors, file).toEqual([]);
      expect(source.value, file).toEqual(reference(text));
    }
  });

  it('reads the YAML 1.2 core scalars as yaml does: dates and yes/no stay text, 0o and 0x are numbers', () => {
    const text = 'day: 2027-01-14\nflag: yes\noff: no\noctal: 0o17\nhex: 0x1F\ninf: .inf\nnothing: ~\nfloat: 1e3\nquoted: "007"\nlist: [a, {b: 1}]\n';
    const source = readYamlSource('scalars.yaml', text);
    expect(source.value).toEqual(reference(text));
    expect(source.value).toMatchObject({ day: '2027-01-14', flag: 'yes', octal: 15, hex: 31, float: 1000, nothing: null, quoted: '007' });
    // A null key is "" to yaml (and "null" to js-yaml): such a text is read by yaml.
    for (const keyed of ['null: 1\n', 'a:\n  ~: 1\n', '{x: 1, null: 2}\n']) expect(readYamlSource('null-key.yaml', keyed).value).toEqual(reference(keyed));
  });

  it('reports a duplicate key, a syntax error and an unknown tag at their line and column, and an empty file as null', () => {
    expect(readYamlSource('dup.yaml', 'a: 1\nb: 2\na: 3\n').syntaxErrors).toEqual([expect.stringMatching(/^dup\.yaml:3:1 \/ YAML duplicate key/)]);
    expect(readYamlSource('bad.yaml', 'a: [1, 2\nb: 3\n').syntaxErrors[0]).toMatch(/^bad\.yaml:\d+:\d+ \/ YAML syntax error/);
    expect(readYamlSource('tag.yaml', 'a: !secret x\n').syntaxErrors[0]).toMatch(/^tag\.yaml:1:4 \/ YAML syntax error/);
    expect(readYamlSource('empty.yaml', '').value).toBeNull();
  });

  it('locates a pointer in a file read by the fast path', () => {
    const source = readYamlSource('where.yaml', 'models:\n  - id: a\n    upstream: b\n');
    expect(source.locate('/models/0/upstream')).toBe('where.yaml:3:15');
    expect(source.locate('/models/0', 'upstream')).toBe('where.yaml:3:5');
  });
});
