#!/usr/bin/env node
// npm run check-protocol -- <protocol.yaml> --fixture <fixture.yaml>: runs an operator's task protocol through the
// conformance kit (test/conformance.test.ts) against a fake of its vendor built from the fixture file, on 127.0.0.1.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

const args = process.argv.slice(2);
const at = args.indexOf('--fixture');
const fixture = at >= 0 ? args[at + 1] : undefined;
const protocol = args.find((arg, i) => !arg.startsWith('--') && i !== at + 1);
if (!protocol || !fixture) {
  console.error('usage: npm run check-protocol -- channels/protocols/<id>.yaml --fixture <fixture.yaml>');
  process.exit(2);
}
for (const file of [protocol, fixture]) {
  if (!existsSync(file)) {
    console.error(`${file}: no such file`);
    process.exit(2);
  }
}
const env = { ...process.env, CHECK_PROTOCOL_FILE: resolve(protocol), CHECK_PROTOCOL_FIXTURE: resolve(fixture) };
const run = spawnSync('npx', ['vitest', 'run', '--project', 'sqlite', 'test/conformance.test.ts'], { stdio: 'inherit', env });
process.exit(run.status ?? 1);
