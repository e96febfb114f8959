// The SigV4 check the cloud fakes use (test/kit/fake-cloud-auth.ts, node:crypto from the AWS reference) and the signer
// the gateway uses (@smithy/signature-v4) both agree with the AWS Signature Version 4 test suite's `get-vanilla` case
// (credentials AKIDEXAMPLE, 2015-08-30T12:36:00Z, us-east-1, service "service"), so neither is only checked against the other.
import { Hash } from '@smithy/hash-node';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { sigV4Problem, type AwsKeys } from './kit/fake-cloud-auth.js';

const keys: AwsKeys = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', region: 'us-east-1', service: 'service' };
const signedAt = Date.parse('2015-08-30T12:36:00Z');
const GET_VANILLA =
  'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31';

const request = (authorization: string) => ({ method: 'GET', path: '/', headers: { host: 'example.amazonaws.com', 'x-amz-date': '20150830T123600Z', authorization }, body: undefined, raw: Buffer.alloc(0) });

describe('AWS Signature Version 4, against the AWS test suite', () => {
  it("the fakes' check accepts get-vanilla's signature and refuses a changed one", () => {
    expect(sigV4Problem(request(GET_VANILLA), keys, signedAt)).toBeUndefined();
    expect(sigV4Problem(request(GET_VANILLA.replace(/.$/, '0')), keys, signedAt)).toBe('signature does not match');
    expect(sigV4Problem(request(GET_VANILLA), { ...keys, secretAccessKey: 'another' }, signedAt)).toBe('signature does not match');
    expect(sigV4Problem(request(GET_VANILLA), keys, signedAt + 6 * 60_000)).toBe('signature expired');
  });

  it("smithy's signer writes get-vanilla's signature (the suite's case has no x-amz-content-sha256, which the gateway also signs)", async () => {
    const signer = new SignatureV4({ service: 'service', region: 'us-east-1', credentials: { accessKeyId: keys.accessKeyId, secretAccessKey: keys.secretAccessKey }, sha256: Hash.bind(null, 'sha256'), applyChecksum: false });
    const signed = await signer.sign({ method: 'GET', protocol: 'https:', hostname: 'example.amazonaws.com', path: '/', query: {}, headers: { host: 'example.amazonaws.com' } }, { signingDate: new Date(signedAt) });
    expect(signed.headers.authorization).toBe(GET_VANILLA);
  });
});
