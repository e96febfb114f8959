// The Files page: generated images and videos, previewed through signed URLs; owners and admins may delete.
import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../../base/errors.js';
import type { DashboardDeps } from '../deps.js';
import { deleteGeneratedMedia, findGeneratedMedia, listGeneratedMedia, mediaView, parseKind } from '../media.js';
import { canManage, dashboardActor, MANAGERS, requireUser } from '../session.js';

const notFound = () => new NotFoundError('no such file in this workspace (it may have expired or been deleted)', 'file_not_found');

export function registerFilesRoutes(app: FastifyInstance, services: DashboardDeps): void {
  app.get('/files', { preHandler: requireUser(services) }, async (req, reply) => {
    const ctx = req.dashboard!;
    const query = req.query as { kind?: string; before?: string };
    const kind = parseKind(query.kind);
    const before = typeof query.before === 'string' ? query.before.slice(0, 64) : undefined;
    const { rows, hasMore } = await listGeneratedMedia(services.db, ctx.workspace.workspaceId, { kind, before });
    const kindParam = kind ? `kind=${kind}&` : '';
    return reply.view('files', {
      title: 'Files',
      page: 'files',
      dashboard: ctx,
      kind: kind ?? '',
      files: rows.map((row) => mediaView(services, row)),
      canDelete: canManage(ctx.workspace.role),
      nextUrl: hasMore ? `/dashboard/files?${kindParam}before=${rows[rows.length - 1].id}` : '',
      firstUrl: before ? `/dashboard/files${kind ? `?kind=${kind}` : ''}` : '',
    });
  });

  app.get('/files/:id', { preHandler: requireUser(services) }, async (req, reply) => {
    const ctx = req.dashboard!;
    const row = await findGeneratedMedia(services.db, ctx.workspace.workspaceId, (req.params as { id: string }).id);
    if (!row) throw notFound();
    return reply.view('file', { title: row.filename, page: 'files', dashboard: ctx, file: mediaView(services, row), canDelete: canManage(ctx.workspace.role) });
  });

  // The role is checked here whatever the page showed: a member's forged POST gets 403.
  app.post('/files/:id/delete', { preHandler: [app.csrfProtection, requireUser(services, MANAGERS)] }, async (req, reply) => {
    const ctx = req.dashboard!;
    if (!(await deleteGeneratedMedia(services, ctx.workspace.workspaceId, (req.params as { id: string }).id, req.log, dashboardActor(req)))) throw notFound();
    if (req.headers['hx-request'] === 'true') {
      // From the grid the card is swapped out; from the file's own page the browser goes back to the list.
      const fromGrid = req.headers['hx-target'] !== undefined;
      return fromGrid ? reply.type('text/html').send('') : reply.header('hx-redirect', '/dashboard/files').send();
    }
    return reply.redirect('/dashboard/files', 303);
  });
}
