#!/usr/bin/env node
// `mc ready local`: exits 0 once the minio stand-in answers on its port.
import { readFileSync } from 'node:fs';
let port = 9000;
try { port = Number(readFileSync('/tmp/minio.port', 'utf8')); } catch { process.exit(1); }
const res = await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined);
process.exit(res ? 0 : 1);
