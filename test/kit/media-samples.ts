// Small byte samples of every accepted upload format (and some refused ones), built in code so no binary fixtures are needed.
import { deflateSync } from 'node:zlib';

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const byte of buf) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return ~c >>> 0;
}

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A real 1x1 PNG, optionally padded with an ancillary chunk to reach a size. */
export function png(padTo = 0): Buffer {
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
  const idat = deflateSync(Buffer.from([0, 255, 0, 0]));
  const parts = [Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk('IHDR', ihdr), pngChunk('IDAT', idat)];
  const end = pngChunk('IEND', Buffer.alloc(0));
  const size = parts.reduce((n, p) => n + p.length, 0) + end.length;
  if (padTo > size) parts.push(pngChunk('zzZz', Buffer.alloc(padTo - size - 12, 0x61)));
  return Buffer.concat([...parts, end]);
}

const riff = (form: string, chunk: Buffer) => {
  const header = Buffer.alloc(12);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(4 + chunk.length, 4);
  header.write(form, 8, 'ascii');
  return Buffer.concat([header, chunk]);
};

const ftyp = (brand: string) => {
  const box = Buffer.alloc(32);
  box.writeUInt32BE(32, 0);
  box.write('ftyp', 4, 'ascii');
  box.write(brand.padEnd(4, ' '), 8, 'ascii');
  box.write('isommp42', 16, 'ascii');
  return Buffer.concat([box, Buffer.alloc(64)]);
};

function webm(): Buffer {
  // EBML header with DocType "webm", then an empty Segment.
  const docType = Buffer.concat([Buffer.from([0x42, 0x82, 0x84]), Buffer.from('webm', 'ascii')]);
  const version = Buffer.from([0x42, 0x86, 0x81, 0x01]);
  const body = Buffer.concat([version, docType]);
  return Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x80 | body.length]), body, Buffer.from([0x18, 0x53, 0x80, 0x67, 0x80]), Buffer.alloc(64)]);
}

/** One sample per accepted format, with the type the gateway must report. */
export const acceptedSamples: { name: string; bytes: Buffer; contentType: string }[] = [
  { name: 'image.png', bytes: png(), contentType: 'image/png' },
  { name: 'image.jpg', bytes: Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10]), Buffer.from('JFIF\0', 'binary'), Buffer.alloc(120)]), contentType: 'image/jpeg' },
  { name: 'image.webp', bytes: riff('WEBP', Buffer.concat([Buffer.from('VP8 ', 'ascii'), Buffer.alloc(100)])), contentType: 'image/webp' },
  { name: 'image.gif', bytes: Buffer.concat([Buffer.from('GIF89a', 'ascii'), Buffer.alloc(100)]), contentType: 'image/gif' },
  { name: 'video.mp4', bytes: ftyp('isom'), contentType: 'video/mp4' },
  { name: 'video.webm', bytes: webm(), contentType: 'video/webm' },
  { name: 'audio.mp3', bytes: Buffer.concat([Buffer.from('ID3', 'ascii'), Buffer.from([4, 0, 0, 0, 0, 0, 0]), Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(400)]), contentType: 'audio/mpeg' },
  { name: 'audio.m4a', bytes: ftyp('M4A'), contentType: 'audio/mp4' },
  { name: 'audio.wav', bytes: riff('WAVE', Buffer.concat([Buffer.from('fmt ', 'ascii'), Buffer.alloc(100)])), contentType: 'audio/wav' },
  { name: 'doc.pdf', bytes: Buffer.from('%PDF-1.4\n1 0 obj << >> endobj\ntrailer << >>\n%%EOF\n', 'ascii'), contentType: 'application/pdf' },
];

export const html = Buffer.from('<!doctype html><html><body><script>alert(1)</script></body></html>', 'utf8');
export const zip = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(60)]);
