// `hangar runs handoff` (GET /agent/runs/{id}/handoff/attachments) and `hangar runs redirect` (the two lookups of
// /agent/conversations/{id}/redirect and /agent/sessions/{id}/redirect).
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { show } from '../platform/cli/output.js';
import { table } from '../platform/cli/table.js';
import { problemOf } from '../platform/http/api-fetch.js';
import { callApi, clientOptionsFromEnv } from '../platform/http/client.js';

interface HandoffList {
  attachments: Array<{ attachment_id: string; download_url: string; filename: string; mime_type?: string }>;
}

export function handoffTable(list: HandoffList): string {
  return table(
    list.attachments,
    [
      { header: 'ID', value: (file) => file.attachment_id },
      { header: 'FILE', value: (file) => file.filename },
      { header: 'TYPE', value: (file) => file.mime_type ?? '' },
      { header: 'DOWNLOAD (10 minutes, no key needed)', value: (file) => file.download_url },
    ],
    'Nothing to hand off: the run has no attachments and its last execution kept no session.',
  );
}

/** Saves each file into `directory` under its attachment ID's name (never a path the server chose). */
async function saveAll(list: HandoffList, directory: string): Promise<string> {
  fs.mkdirSync(directory, { recursive: true });
  const lines: string[] = [];
  for (const file of list.attachments) {
    const response = await fetch(file.download_url);
    if (!response.ok) throw await problemOf(response);
    // The ID is Hangar's (input-<n>, session-<execution>); the file name is the run's and may hold anything.
    const name = `${file.attachment_id.replace(/[^A-Za-z0-9._-]/g, '_')}-${path.basename(file.filename).replace(/[^A-Za-z0-9._-]/g, '_')}`;
    const target = path.join(directory, name);
    fs.writeFileSync(target, Buffer.from(await response.arrayBuffer()), { flag: 'wx' });
    lines.push(`saved ${target}`);
  }
  return `${lines.join('\n')}${lines.length ? '\n' : 'Nothing to hand off.\n'}`;
}

export function registerRunLookupCommands(runs: Command): void {
  runs
    .command('handoff')
    .description("list the files the run's next execution picks up (its attachments, the last CLI session), with links")
    .argument('<run_id>')
    .option('--save <directory>', 'download each file into this directory')
    .addHelpText(
      'after',
      '\nExamples:\n  $ hangar runs handoff <run_id>\n  $ hangar runs handoff <run_id> --save ./handoff\n',
    )
    .action(async (runId: string, options: { save?: string }) => {
      const list = await callApi<HandoffList>(
        clientOptionsFromEnv(),
        'GET',
        `/agent/runs/${encodeURIComponent(runId)}/handoff/attachments`,
      );
      if (options.save === undefined) return show(list, handoffTable);
      process.stdout.write(await saveAll(list, options.save));
    });
  runs
    .command('redirect')
    .description("the other ID of a shared link: a conversation's live session (run), or a session's conversation")
    .option('--conversation <conversation_id>', "the live session (the run's ID) of this conversation")
    .option('--session <session_id>', 'the conversation of this session (a run ID) once it no longer executes')
    .addHelpText(
      'after',
      '\nExamples:\n  $ hangar runs redirect --conversation <conversation_id>\n  $ hangar runs redirect --session <run_id>\n',
    )
    .action(async (options: { conversation?: string; session?: string }) => {
      if ((options.conversation === undefined) === (options.session === undefined))
        throw new Error('give exactly one of --conversation and --session');
      const client = clientOptionsFromEnv();
      if (options.conversation !== undefined) {
        const answer = await callApi<{ session_id?: string }>(
          client,
          'GET',
          `/agent/conversations/${encodeURIComponent(options.conversation)}/redirect`,
        );
        return show(answer, (found) =>
          found.session_id
            ? `Live session: run ${found.session_id} (hangar runs events ${found.session_id})\n`
            : 'No live session: the conversation is unknown, not yours, or its newest run does not execute now.\n',
        );
      }
      const answer = await callApi<{ conversation_id?: string }>(
        client,
        'GET',
        `/agent/sessions/${encodeURIComponent(options.session!)}/redirect`,
      );
      return show(answer, (found) =>
        found.conversation_id
          ? `Conversation: ${found.conversation_id}\n`
          : 'No conversation: the session is unknown, not yours, still executing, or it wrote none.\n',
      );
    });
}
