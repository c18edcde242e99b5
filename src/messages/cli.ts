import type { Command } from 'commander';
import { table } from '../platform/cli/table.js';
import { callAndPrint } from '../platform/http/client.js';

interface Header {
  message_id: string;
  sender_run_id: string;
  subject: string;
  sent_at: string;
  read_at: string | null;
}

/** `hangar messages ...`: what the runs of a tree said to each other (HANGAR_URL, HANGAR_API_KEY). */
export function registerMessageCommands(program: Command): void {
  const messages = program.command('messages').description('messages between the runs of a tree (orchestration)');
  messages
    .command('list')
    .description("a run's inbox, oldest first")
    .argument('<run-id>')
    .option('--unread', 'only the messages not read yet')
    .action((runId: string, options: { unread?: boolean }) =>
      callAndPrint<Header[]>(
        'GET',
        `/agent/messages/${encodeURIComponent(runId)}${options.unread ? '?unread=true' : ''}`,
        undefined,
        (headers) =>
          table(
            headers,
            [
              { header: 'MESSAGE', value: (item) => item.message_id },
              { header: 'FROM RUN', value: (item) => item.sender_run_id },
              { header: 'SUBJECT', value: (item) => item.subject },
              { header: 'SENT', value: (item) => item.sent_at },
              { header: 'READ', value: (item) => item.read_at ?? '' },
            ],
            'No messages.',
          ),
      ),
    );
  messages
    .command('read')
    .description('show a message (marks it read)')
    .argument('<message-id>')
    .action((messageId: string) =>
      callAndPrint<Header & { body: string }>(
        'GET',
        `/agent/messages/${encodeURIComponent(messageId)}/read`,
        undefined,
        (message) =>
          `From run ${message.sender_run_id}, ${message.sent_at}\nSubject: ${message.subject}\n\n${message.body}\n`,
      ),
    );
  messages
    .command('send')
    .description('send a message to runs of a tree, as one of its runs')
    .requiredOption('--from <run-id>', 'the run it is sent as')
    .requiredOption('--to <run-id...>', 'the runs it goes to (same tree)')
    .requiredOption('--subject <text>')
    .requiredOption('--body <text>')
    .addHelpText(
      'after',
      '\nExamples:\n  $ hangar messages send --from <parent> --to <child> --subject task --body "Add the tests"\n',
    )
    .action((options: { from: string; to: string[]; subject: string; body: string }) =>
      callAndPrint<{ message_ids: string[] }>(
        'POST',
        '/agent/messages',
        { to: options.to, subject: options.subject, body: options.body, sender_run_id: options.from },
        ({ message_ids }) => `${message_ids.join('\n')}\n`,
      ),
    );
}
