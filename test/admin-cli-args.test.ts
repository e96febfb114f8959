// `npm run admin`: flags stand anywhere, before the command's words as well as after them.
import { describe, expect, it } from 'vitest';
import { selectCommand, type AdminCommand } from '../src/cli/admin/command.js';
import { commands as keyCommands } from '../src/cli/admin/keys.js';
import { commands as userCommands } from '../src/cli/admin/users.js';

const commands: AdminCommand[] = [...keyCommands, ...userCommands];

describe('admin CLI arguments', () => {
  it('takes --config before the command as it does after it', () => {
    const before = selectCommand(['--config', 'x.yaml', 'key', 'create', '--workspace', 'acme'], commands);
    const after = selectCommand(['key', 'create', '--workspace', 'acme', '--config', 'x.yaml'], commands);
    expect(before.command?.name).toBe('key create');
    expect(after.command?.name).toBe('key create');
    expect(before.rest).toEqual(['--config', 'x.yaml', '--workspace', 'acme']);
    expect(after.rest).toEqual(['--workspace', 'acme', '--config', 'x.yaml']);
  });

  it('reads --config=PATH and flags between the command words, keeping the command\'s own positionals', () => {
    const selected = selectCommand(['key', '--config=x.yaml', 'revoke', 'key_123'], commands);
    expect(selected.command?.name).toBe('key revoke');
    expect(selected.rest).toEqual(['--config=x.yaml', 'key_123']);
  });

  it('names no command when the words name none', () => {
    expect(selectCommand(['--config', 'key', 'create'], commands).command).toBeUndefined();
    expect(selectCommand(['keys', 'create'], commands).command).toBeUndefined();
  });
});
