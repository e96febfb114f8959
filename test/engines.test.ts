// The Node.js version package.json promises is one every installed package accepts, and the one the README names
// (issue 49: cookie 2 wanted Node 22 while the README said 20.18 was enough, and npm install warned EBADENGINE).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './kit/paths.js';

const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, { engines?: { node?: string } | string[] }> };
const oldest = semver.minVersion(pkg.engines.node)!.version;

describe('the Node.js version the project asks for', () => {
  it('is accepted by every package of the lockfile, so npm install warns of no engine', () => {
    const refusing = Object.entries(lock.packages)
      .map(([path, entry]) => [path, Array.isArray(entry.engines) ? undefined : entry.engines?.node] as const)
      .filter(([path, range]) => path && range && !semver.satisfies(oldest, range))
      .map(([path, range]) => `${path} wants node ${range}`);
    expect(refusing).toEqual([]);
  });

  it('is the one the README names', () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const [major, minor] = oldest.split('.');
    expect(readme).toContain(`Node.js ${major}.${minor} or newer`);
  });
});
