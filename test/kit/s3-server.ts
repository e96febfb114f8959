// A real S3-protocol server (s3rver) on 127.0.0.1 port 0 over a temp folder, for testing the S3 blob store with the real minio client.
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';

export interface S3Server {
  endpoint: string;
  bucket: string;
  accessKey: string;
  secretKey: string;
  /** A storage.blobs config block (YAML) pointing at this server. */
  blobsConfig: string;
  close(): Promise<void>;
}

/** s3rver accepts its fixed development credentials. */
const ACCESS = 'S3RVER';

export async function startS3Server(bucket = 'gateway-files'): Promise<S3Server> {
  const directory = mkdtempSync(join(tmpdir(), 's3rver-'));
  const instance = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const address = (await instance.run()) as AddressInfo;
  const endpoint = `http://127.0.0.1:${address.port}`;
  return {
    endpoint,
    bucket,
    accessKey: ACCESS,
    secretKey: ACCESS,
    blobsConfig: `  blobs:\n    driver: s3\n    endpoint: ${endpoint}\n    bucket: ${bucket}\n    region: us-east-1\n    accessKey: ${ACCESS}\n    secretKey: ${ACCESS}\n`,
    async close() {
      const server = instance.httpServer as Server;
      server.closeAllConnections();
      await instance.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
