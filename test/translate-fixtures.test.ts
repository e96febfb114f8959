// Runs the mapping fixtures in channels/protocols/tests/ (input and expected output, kept as data beside the mappings) through
// the loader's own fixture runner, with every mapping leaf checked against liquidjs's public evalValueSync as it renders.
// FIXTURES_WRITE=1 fills in a missing `out` from the current mapping (review the diff before committing it).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDocument } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/compile/load-config.js';
import { FixtureRunner, kindOf, readFixtureFiles, runMappingFixtures } from '../src/compile/fixtures.js';
import { repoRoot } from './kit/paths.js';

const fixturesDir = join(repoRoot, 'channels', 'protocols', 'tests');
const writing = process.env.FIXTURES_WRITE === '1';
const config = await loadConfig(join(repoRoot, 'config.example.yaml'), { env: {} });
const runner = new FixtureRunner(config, config.protocols);
config.templates.verify = true;
afterAll(() => {
  config.templates.verify = false;
});

for (const file of readFixtureFiles(fixturesDir)) {
  describe(`mapping fixtures ${file.path.slice(fixturesDir.length + 1)}`, () => {
    file.cases.forEach((c, index) => {
      const kind = kindOf(c);
      it(`${kind}: ${c.name}`, () => {
        const expected = (kind === 'mapping' ? c : c[kind]) as { out?: unknown };
        if (writing && expected.out === undefined && !('error' in expected)) {
          const doc = parseDocument(readFileSync(file.path, 'utf8'));
          const result = runner.run(file, c);
          const at = kind === 'mapping' ? ['cases', index] : ['cases', index, kind];
          doc.setIn([...at, 'out'], result.out);
          if (kind === 'stream') doc.setIn([...at, 'usage'], result.usage);
          writeFileSync(file.path, doc.toString({ lineWidth: 0, flowCollectionPadding: true }));
          return;
        }
        expect(runner.check(file, index, c)).toBeUndefined();
        expect(config.templates.verification.mismatches).toEqual([]);
      });
    });
  });
}

describe('fixtures at load', () => {
  it('every shipped fixture passes the loader, which refuses a config on any failure', () => {
    expect(runMappingFixtures(config, config.protocols, fixturesDir)).toEqual([]);
  });

  it('covers every mapping the shipped protocols declare', () => {
    const files = readFixtureFiles(fixturesDir);
    const pairs = new Set(files.filter((f) => f.client).map((f) => `${f.protocol} ${f.client}`));
    for (const protocol of config.protocols.values()) {
      // A translation a variant takes unchanged from the protocol it extends is covered by that protocol's fixtures.
      const base = protocol.extends ? config.protocols.get(protocol.extends) : undefined;
      for (const [client, spec] of Object.entries(protocol.translations ?? {})) expect(pairs).toContain(`${spec === base?.translations?.[client] ? base!.id : protocol.id} ${client}`);
    }
    const single = new Set(files.flatMap((f) => f.cases.filter((c) => c.mapping).map((c) => `${f.protocol} ${c.mapping}`)));
    expect(single).toContain('evaluate-native /evaluate/request');
    expect(single).toContain('evaluate-native /evaluate/response');
  });
});
