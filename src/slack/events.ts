/**
 * What Slack's Events API sends, read after the signature has passed (signature.ts): the URL verification handshake,
 * a mention of the app (which starts a run), a reply in a thread (a follow-up of the thread's run), or something
 * that starts nothing. Every field is checked before use: the sender is Slack, but the text is anyone's in the
 * channel, and it reaches the run only as untrusted context.
 */

export type SlackRequest =
  | { kind: 'url_verification'; challenge: string }
  | ({ kind: 'mention' } & SlackMessage)
  | ({ kind: 'reply' } & SlackMessage)
  | { kind: 'ignored'; reason: string };

/** A message in a channel, as the run and its answer need it. */
export interface SlackMessage {
  /** The event's ID (Ev...): a retry of the same event carries the same one, so it is the replay key. */
  eventId: string;
  /** The workspace (T...): only a linked workspace starts anything. */
  teamId: string;
  channel: string;
  /** Who wrote it (U...): a member of a linked channel, mapped to a Hangar user by e-mail or the link's identity. */
  user: string;
  text: string;
  /** The message's own timestamp (its ID in the channel). */
  ts: string;
  /** The thread it is in: its parent's timestamp, or its own when it starts one (the bot answers there). */
  threadTs: string;
}

const ID = /^[A-Z0-9]{2,40}$/;
const TS = /^\d{1,12}\.\d{1,9}$/;

function text(value: unknown, max: number): string | undefined {
  return typeof value === 'string' && value.length <= max ? value : undefined;
}

/** Reads an Events API body (JSON already parsed). */
export function readSlackRequest(body: unknown): SlackRequest {
  if (typeof body !== 'object' || body === null) return { kind: 'ignored', reason: 'not an Events API body' };
  const envelope = body as Record<string, unknown>;
  if (envelope.type === 'url_verification') {
    const challenge = text(envelope.challenge, 200);
    return challenge ? { kind: 'url_verification', challenge } : { kind: 'ignored', reason: 'no challenge' };
  }
  if (envelope.type !== 'event_callback') return { kind: 'ignored', reason: `not an event (${String(envelope.type)})` };
  const event = (typeof envelope.event === 'object' && envelope.event !== null ? envelope.event : {}) as Record<
    string,
    unknown
  >;
  // The app's own messages (and any bot's) start nothing: its answers in the thread must not become follow-ups.
  if (event.bot_id !== undefined || event.subtype !== undefined)
    return { kind: 'ignored', reason: 'a bot message or a message change' };
  const eventId = text(envelope.event_id, 60);
  const teamId = text(envelope.team_id, 40);
  const channel = text(event.channel, 40);
  const user = text(event.user, 40);
  const message = text(event.text, 40_000);
  const ts = text(event.ts, 30);
  const threadTs = event.thread_ts === undefined ? ts : text(event.thread_ts, 30);
  if (
    !eventId ||
    !teamId ||
    !ID.test(teamId) ||
    !channel ||
    !ID.test(channel) ||
    !user ||
    !ID.test(user) ||
    message === undefined ||
    !ts ||
    !TS.test(ts) ||
    !threadTs ||
    !TS.test(threadTs)
  )
    return { kind: 'ignored', reason: 'an event without its channel, user, text or time' };
  const fields = { eventId, teamId, channel, user, text: message, ts, threadTs };
  if (event.type === 'app_mention') return { kind: 'mention', ...fields };
  // A plain message counts only inside a thread (the thread's run, if any, takes it as a follow-up).
  if (event.type === 'message' && event.thread_ts !== undefined && threadTs !== ts) return { kind: 'reply', ...fields };
  return { kind: 'ignored', reason: `not a mention or a thread reply (${String(event.type)})` };
}

/** `env:<name>` in a message: the environment it asks for (the first one named). */
const ENV_WORD = /(?:^|\s)env:([A-Za-z0-9][A-Za-z0-9._-]{0,99})(?=\s|$)/;

/**
 * The prompt a mention asks for: the text without the app's mention (`<@U...>`) and the `env:<name>` word, and the
 * environment named, if any.
 */
export function mentionPrompt(message: string, botUserId: string): { prompt: string; environmentName?: string } {
  const named = ENV_WORD.exec(message)?.[1];
  const prompt = message.split(`<@${botUserId}>`).join(' ').replace(ENV_WORD, ' ').replace(/\s+/g, ' ').trim();
  return named === undefined ? { prompt } : { prompt, environmentName: named };
}

/** Which environment a mention's run uses: the one the message names, else the channel's default, else the team's. */
export function chooseEnvironment<E>(choices: {
  named: E | undefined;
  channelDefault: E | undefined;
  teamDefault: E | undefined;
}): E | undefined {
  return choices.named ?? choices.channelDefault ?? choices.teamDefault;
}
