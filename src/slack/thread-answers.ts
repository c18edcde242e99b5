import { WebClient } from '@slack/web-api';

/**
 * The bot's answers in a Slack thread, through Slack's own client (`@slack/web-api`) with the operator's bot token:
 * one message per run, posted in the thread when the run starts and updated as it goes (chat.postMessage, then
 * chat.update of that message), so a thread shows one line per run, not one per step.
 */
export class SlackThreads {
  private readonly client: WebClient;

  /** `apiUrl`: Slack's Web API (its default), or a test's double. */
  constructor(botToken: string, options: { apiUrl?: string } = {}) {
    this.client = new WebClient(botToken, {
      ...(options.apiUrl ? { slackApiUrl: options.apiUrl } : {}),
      // A refused answer is reported to the caller (the run goes ahead without it), not retried for minutes.
      retryConfig: { retries: 2, maxTimeout: 5_000 },
    });
  }

  /** Posts `text` in the thread of `threadTs`; answers the message's timestamp, which update() names. */
  async post(channel: string, threadTs: string, text: string): Promise<string> {
    const answer = await this.client.chat.postMessage({ channel, thread_ts: threadTs, text, unfurl_links: false });
    if (!answer.ts) throw new Error('Slack answered chat.postMessage without the message timestamp');
    return answer.ts;
  }

  /** Replaces the text of a message the bot posted. */
  async update(channel: string, ts: string, text: string): Promise<void> {
    await this.client.chat.update({ channel, ts, text });
  }
}
