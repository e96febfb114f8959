// `npm run admin -- reload`: the config was just loaded and checked by the admin CLI itself; signal the running gateway to swap it in.
import { readFileSync } from 'node:fs';
import { dataPathFor } from '../../config/locate.js';
import { NotFoundError } from '../../errors.js';
import { PID_FILE } from '../../reload.js';
import { adminOf, type AdminCommand } from './command.js';

export const commands: AdminCommand[] = [
  {
    name: 'reload',
    usage: 'check the config and make the running gateway (its pid in storage.dataDir) swap it in',
    options: {},
    checksConfig: true,
    async run(ctx) {
      const pidFile = dataPathFor(ctx.config)(PID_FILE);
      let pid: number;
      try {
        pid = Number(readFileSync(pidFile, 'utf8').trim());
        process.kill(pid, 'SIGHUP');
      } catch {
        throw new NotFoundError(`no running gateway found (${pidFile} is missing or names no live process)`);
      }
      await adminOf(ctx).record('config.reload', null, null, null, { pid, signal: 'SIGHUP' });
      ctx.print(`config OK; sent SIGHUP to gateway pid ${pid}: it swaps the new config in and logs the outcome`);
    },
  },
];
