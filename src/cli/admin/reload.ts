// `npm run admin -- reload`: the config was just loaded and checked by the admin CLI itself; signal the running gateway to swap it in.
import { readFileSync } from 'node:fs';
import { dataPathFor } from '../../config/locate.js';
import { NotFoundError } from '../../base/errors.js';
import { gatewayPid, PID_FILE } from '../../base/pid-file.js';
import { adminOf, type AdminCommand } from './command.js';

export const commands: AdminCommand[] = [
  {
    name: 'reload',
    usage: 'check the config and make the running gateway (its pid in storage.dataDir/gateway.pid, checked to be that gateway) swap it in',
    options: {},
    checksConfig: true,
    async run(ctx) {
      const pidFile = dataPathFor(ctx.config)(PID_FILE);
      let text: string;
      try {
        text = readFileSync(pidFile, 'utf8');
      } catch {
        throw new NotFoundError(`no running gateway found (${pidFile} is missing)`);
      }
      // Checked before anything is signalled: a stale file must never make the CLI signal an unrelated process.
      const found = gatewayPid(text);
      if ('refused' in found) throw new NotFoundError(`no running gateway found in ${pidFile}: ${found.refused}`);
      const { pid } = found;
      process.kill(pid, 'SIGHUP');
      await adminOf(ctx).record('config.reload', null, null, null, { pid, signal: 'SIGHUP' });
      ctx.print(`config OK; sent SIGHUP to gateway pid ${pid}: it swaps the new config in and logs the outcome`);
    },
  },
];
