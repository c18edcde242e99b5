import { type HarnessEvent, inputLine, parseEvent, saidNow } from '../../../runs/index.js';
import type { HarnessTask, TranscriptLine } from '../harness.js';

/** How much of the earlier conversation a continuation's prompt carries, and of any one message in it. */
const RECAP_MAX_CHARS = 24_000;
const MESSAGE_MAX_CHARS = 4_000;

interface Said {
  who: 'User' | 'Agent';
  text: string;
}

/**
 * The whole task as the one prompt a CLI starts with: the base prompt as instructions, a recap of the earlier
 * conversation for a continuation (the CLI's own session files were in an earlier workspace, now gone), then what
 * the user says now. The run's prompt counts as said now in its first execution only, as the conversation shows it.
 */
export function cliPrompt(task: HarnessTask, translate: (line: string) => HarnessEvent[]): string {
  const now = saidNow(task);
  const parts: string[] = [];
  if (task.basePrompt?.trim()) parts.push(`<instructions>\n${task.basePrompt.trim()}\n</instructions>`);
  const recap = conversationRecap(task.history, translate);
  if (recap) parts.push(recap);
  return [...parts, ...now].join('\n\n');
}

/** What a CLI resuming its own session is told: only what the user said since (it has the rest). */
export function resumedPrompt(task: HarnessTask): string {
  return saidNow(task).join('\n\n') || 'Continue where you left off.';
}

/** The user's messages and the agent's text of earlier executions, the oldest message and the latest ones kept. */
function conversationRecap(history: TranscriptLine[], translate: (line: string) => HarnessEvent[]): string | null {
  const said = conversation(history, translate).map(
    ({ who, text }) => `${who}: ${clip(text.trim(), MESSAGE_MAX_CHARS)}`,
  );
  if (said.length === 0) return null;
  const [first, ...rest] = said as [string, ...string[]];
  const kept: string[] = [];
  let size = first.length;
  for (let index = rest.length - 1; index >= 0 && size + rest[index]!.length <= RECAP_MAX_CHARS; index--) {
    kept.unshift(rest[index]!);
    size += rest[index]!.length;
  }
  const left = rest.length - kept.length;
  return [
    '<earlier_conversation>',
    'This continues an earlier conversation. Its work was done in another workspace: what it changed is here only if it was committed and pushed.',
    first,
    ...(left > 0 ? [`(${left} message${left === 1 ? '' : 's'} left out)`] : []),
    ...kept,
    '</earlier_conversation>',
  ].join('\n');
}

/** Who said what, from transcript lines: input lines, and output lines as protocol events or the CLI's stream. */
function conversation(lines: TranscriptLine[], translate: (line: string) => HarnessEvent[]): Said[] {
  const out: Said[] = [];
  // The agent's text joins until something else happens (a tool call, a user message), as the conversation shows it.
  let open = false;
  const add = (who: Said['who'], text: string) => {
    const last = out[out.length - 1];
    if (who === 'Agent' && open && last) last.text += text;
    else out.push({ who, text });
    open = who === 'Agent';
  };
  for (const { stream, line } of lines) {
    if (stream === 'input') {
      open = false;
      for (const text of inputLine(line)?.said ?? []) add('User', text);
      continue;
    }
    const event = parseEvent(line);
    for (const item of event ? [event] : translate(line)) {
      if (item.type === 'text') add('Agent', item.text);
      else if (item.type === 'failed') add('Agent', `(stopped with an error: ${item.message})`);
      else open = false;
    }
  }
  return out.filter(({ text }) => text.trim() !== '');
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
