import type { Command } from 'commander';
import { callAndPrint } from '../platform/http/client.js';

/** `hangar audit`: the team's audit log (team admins), or everyone's with --all (instance administrators). */
export function registerAuditCommands(program: Command): void {
  program
    .command('audit')
    .description("the audit log, newest first: your team's, or with --all the whole instance's")
    .option('--all', "every team's entries (instance administrators)")
    .option('--team <team_uid>', 'with --all: one team only')
    .option('--action <action>', 'only this action, e.g. secret.create')
    .option('--limit <n>', 'entries per page (1-500, default 50)')
    .option('--cursor <cursor>', 'the next page (page_info.next_cursor)')
    .action((options: { all?: boolean; team?: string; action?: string; limit?: string; cursor?: string }) => {
      const query = new URLSearchParams();
      if (options.team) query.set('team_uid', options.team);
      if (options.action) query.set('action', options.action);
      if (options.limit) query.set('limit', options.limit);
      if (options.cursor) query.set('cursor', options.cursor);
      const search = query.size > 0 ? `?${query}` : '';
      return callAndPrint('GET', `${options.all ? '/admin/audit' : '/audit'}${search}`);
    });
}
