#!/usr/bin/env node
// `minio server DIR [--address :PORT] [--console-address ...]` served by s3rver; the port is written for `mc ready local`.
import { writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
const S3rver = createRequire('/opt/s3rver/')('s3rver');
const args = process.argv.slice(2).filter((a) => a !== 'server');
const option = (name) => { const i = args.indexOf(name); return i >= 0 ? args.splice(i, 2)[1] : undefined; };
const port = Number((option('--address') ?? ':9000').split(':').pop());
option('--console-address');
const directory = args[0] ?? '/data';
mkdirSync(directory, { recursive: true });
const server = new S3rver({ address: '0.0.0.0', port, directory, silent: false });
await server.run();
writeFileSync('/tmp/minio.port', String(port));
console.log(`s3rver (minio stand-in) on :${port}, ${directory}`);
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.close().then(() => process.exit(0)));
