// `npm run admin -- reload`: signal the running gateway to load its config again, then report what the gateway itself
// found. The gateway checks the config with its own environment (and the overlay's gateway.env), never the CLI's: a
// channel whose variable is set only for the gateway is enabled, and one whose variable is missing there says so.
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { dataPathFor } from '../../config/locate.js';
import { ConfigError, NotFoundError, GatewayError } from '../../base/errors.js';
import { gatewayPid, PID_FILE } from '../../base/pid-file.js';
import { RELOAD_OUTCOME_FILE, type WrittenOutcome } from '../../compile/reload.js';
import { adminOf, type AdminCommand } from './command.js';

/** How long the CLI waits for the gateway's answer: a reload loads and compiles the whole config. */
const ANSWER_MS = 60_000;

/** The outcome the gateway wrote after `since` (Unix milliseconds), once it is there. */
async function outcomeAfter(file: string, since: number): Promise<WrittenOutcome | undefined> {
  for (const end = Date.now() + ANSWER_MS; Date.now() < end; await sleep(100)) {
    try {
      const outcome = JSON.parse(readFileSync(file, 'utf8')) as WrittenOutcome;
      if (outcome.at >= since) return outcome;
    } catch {
      // Not written yet (or by an older gateway): wait.
    }
  }
  return undefined;
}

export const commands: AdminCommand[] = [
  {
    name: 'reload',
    usage: 'make the running gateway (its pid in storage.dataDir/gateway.pid, checked to be that gateway) load its config again with its own environment, and print what it applied or why it refused',
    options: {},
    async run(ctx) {
      const dataPath = dataPathFor(ctx.config);
      const pidFile = dataPath(PID_FILE);
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
      const sent = Date.now();
      process.kill(pid, 'SIGHUP');
      await adminOf(ctx).record('config.reload', null, null, null, { pid, signal: 'SIGHUP' });
      const outcome = await outcomeAfter(dataPath(RELOAD_OUTCOME_FILE), sent);
      if (!outcome) throw new GatewayError('reload_unanswered', 504, 'server_error', `sent SIGHUP to gateway pid ${pid}; it wrote no outcome within ${ANSWER_MS / 1000} s: see its log`);
      if (!outcome.ok) throw new ConfigError([`the gateway (pid ${outcome.pid}) refused the reload; the running config keeps serving:`, ...(outcome.problems ?? [])]);
      const changes = outcome.changes ?? [];
      ctx.print(changes.length ? `reloaded by gateway pid ${outcome.pid}: ${changes.join('; ')}` : `gateway pid ${outcome.pid} reloaded: nothing changed (files and environment as before)`);
      for (const setting of outcome.restart ?? []) ctx.print(`waits for a restart: ${setting}`);
      for (const reason of outcome.disabled ?? []) ctx.print(reason);
    },
  },
];
