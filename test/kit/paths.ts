// Where the repository is, for suites that read its files: importing this loads nothing of the gateway (unit tests stay light).
import { join } from 'node:path';

export const repoRoot = join(import.meta.dirname, '..', '..');
