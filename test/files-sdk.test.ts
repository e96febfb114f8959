// The official openai SDK against a listening gateway, on both blob stores: files.create, list (auto-pagination), retrieve, content, delete.
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeFile } from '../src/files/index.js';
import { blobDrivers, startFilesGateway, type FilesGateway } from './kit/files.js';
import { png } from './kit/media-samples.js';

describe.each(blobDrivers)('openai SDK files on %s blobs', (driver) => {
  let gw: FilesGateway;
  let client: OpenAI;

  beforeAll(async () => {
    gw = await startFilesGateway(driver, { listen: true });
    client = new OpenAI({ apiKey: gw.key, baseURL: `${gw.url}/v1`, maxRetries: 0 });
  });
  afterAll(async () => {
    await gw.close();
  });

  it('creates, retrieves, downloads and deletes a file', async () => {
    const bytes = png(3000);
    // The gateway's file object extends the SDK's with content_type, source and the signed url.
    const created = (await client.files.create({ file: await toFile(bytes, 'ref.png', { type: 'image/png' }), purpose: 'vision' })) as OpenAI.FileObject & { url: string };
    expect(created).toMatchObject({ object: 'file', bytes: 3000, filename: 'ref.png', purpose: 'vision', content_type: 'image/png', source: 'upload' });
    expect(created.url).toContain(`${gw.url}/api/v1/files/${created.id}/content?token=`);

    const retrieved = (await client.files.retrieve(created.id)) as OpenAI.FileObject & { url: string };
    expect(retrieved.id).toBe(created.id);
    expect(retrieved.bytes).toBe(3000);

    const content = await client.files.content(created.id);
    expect(content.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await content.arrayBuffer()).equals(bytes)).toBe(true);

    const signed = await fetch(retrieved.url);
    expect(signed.status).toBe(200);
    expect(Buffer.from(await signed.arrayBuffer()).equals(bytes)).toBe(true);

    const deleted = await client.files.delete(created.id);
    expect(deleted).toEqual({ id: created.id, object: 'file', deleted: true });
    await expect(client.files.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect((await fetch(retrieved.url)).status).toBe(404);
  });

  it('raises the SDK’s typed errors for a refused type and an unknown purpose', async () => {
    const html = await toFile(Buffer.from('<html><body>hi</body></html>'), 'x.png', { type: 'image/png' });
    await expect(client.files.create({ file: html, purpose: 'vision' })).rejects.toMatchObject({ status: 415 });
    await expect(client.files.create({ file: await toFile(png(), 'a.png'), purpose: 'fine-tune' })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('auto-paginates a listing of more than 100 files, newest first', async () => {
    const workspace = await gw.newWorkspace(`many-${driver}`);
    const own = new OpenAI({ apiKey: await gw.newKey({ workspace }), baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const ids: string[] = [];
    // Seeded through the store's own entry point; the SDK's upload path is covered above.
    for (let i = 0; i < 105; i++) ids.push((await storeFile(gw.services, { workspaceId: workspace.id, stream: [png()], filename: `f${i}.png`, purpose: i % 3 ? 'vision' : 'image_generation', source: i % 3 ? 'upload' : 'generated' })).id);

    const seen: string[] = [];
    for await (const file of own.files.list()) seen.push(file.id);
    expect(seen).toEqual([...ids].reverse());

    let page = await own.files.list({ limit: 100, order: 'asc' });
    const pages = [page.data.length];
    while (page.hasNextPage()) {
      page = await page.getNextPage();
      pages.push(page.data.length);
    }
    expect(pages).toEqual([100, 5]);

    const generated: string[] = [];
    for await (const file of own.files.list({ purpose: 'image_generation' })) generated.push(file.id);
    expect(generated).toHaveLength(35);
  });
});
