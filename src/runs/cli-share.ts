// `hangar runs share|unshare|sharing`: a run's share link (config.session_sharing; docs/api.md "Sharing a run").
import type { Command } from 'commander';
import { oneOf } from '../platform/cli/options.js';
import { show } from '../platform/cli/output.js';
import { callApi, clientOptionsFromEnv } from '../platform/http/client.js';

export const SHARE_LEVELS = ['VIEWER', 'EDITOR'] as const;

interface ShareLinkAnswer {
  public_access: string;
  created_at: string;
  created_by: { type: string; uid: string };
  url?: string;
}

const sharingPath = (runId: string) => `/agent/runs/${encodeURIComponent(runId)}/sharing`;

/** The words of a link: its level, and its URL when it was just made (it is shown this once). */
export function shareLinkLine(link: ShareLinkAnswer): string {
  const level = link.public_access === 'EDITOR' ? 'may read it and send follow-ups' : 'may read it';
  return link.url
    ? `Anyone with this link ${level} (shown once; \`hangar runs unshare\` revokes it):\n  ${link.url}\n`
    : `Shared since ${link.created_at} (${link.public_access}): anyone with its link ${level}.\n`;
}

export function registerRunShareCommands(runs: Command): void {
  runs
    .command('share')
    .description('make a link to the run for people without a key (a new one: the previous link stops working)')
    .argument('<run_id>')
    .option(
      '--access <level>',
      'viewer (default: read the run) or editor (also send follow-ups)',
      oneOf('--access', SHARE_LEVELS),
    )
    .addHelpText(
      'after',
      '\nExamples:\n  $ hangar runs share <run_id>                  # a read-only link\n  $ hangar runs share <run_id> --access editor  # the link may send follow-ups too\n',
    )
    .action(async (runId: string, options: { access?: string }) =>
      show(
        await callApi<ShareLinkAnswer>(clientOptionsFromEnv(), 'PUT', sharingPath(runId), {
          public_access: options.access ?? 'VIEWER',
        }),
        shareLinkLine,
      ),
    );
  runs
    .command('unshare')
    .description("revoke the run's share link")
    .argument('<run_id>')
    .addHelpText(
      'after',
      '\nExamples:\n  $ hangar runs unshare <run_id>   # whoever holds the link loses access at once\n',
    )
    .action(async (runId: string) =>
      show(
        await callApi<ShareLinkAnswer>(clientOptionsFromEnv(), 'DELETE', sharingPath(runId)),
        () => `Revoked the share link of run ${runId}.\n`,
      ),
    );
  runs
    .command('sharing')
    .description('show whether the run has a share link, and its level (never its URL)')
    .argument('<run_id>')
    .addHelpText(
      'after',
      '\nExamples:\n  $ hangar runs sharing <run_id>   # VIEWER or EDITOR, since when; 404 when not shared\n',
    )
    .action(async (runId: string) =>
      show(await callApi<ShareLinkAnswer>(clientOptionsFromEnv(), 'GET', sharingPath(runId)), shareLinkLine),
    );
}
