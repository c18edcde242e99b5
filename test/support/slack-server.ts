import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small real Slack Web API server for tests, speaking the methods Hangar calls with Slack's shapes: every method is
 * `POST /api/<method>` with a form-encoded or JSON body and the bot token as `Authorization: Bearer`, and every answer
 * is HTTP 200 with `{ ok: true, ... }` or `{ ok: false, error }` (Slack's own error words: `not_authed`,
 * `invalid_auth`, `channel_not_found`, `message_not_found`, `unknown_method`). `@slack/web-api`'s WebClient is pointed
 * at it with `slackApiUrl`. It keeps each channel's messages, so chat.update changes what chat.postMessage posted, and
 * records every call.
 */

export interface SlackCall {
  method: string;
  authorization: string | undefined;
  args: Record<string, unknown>;
}

export interface SlackPostedMessage {
  channel: string;
  ts: string;
  threadTs: string | undefined;
  text: string;
  /** Every text the message had, the first one first (chat.update appends). */
  history: string[];
}

export interface SlackServer {
  /** The base WebClient takes as `slackApiUrl` (ends in `/api/`). */
  apiUrl: string;
  calls: SlackCall[];
  messages: SlackPostedMessage[];
  close(): Promise<void>;
}

export async function startSlackServer(options: { token: string; channels: string[] }): Promise<SlackServer> {
  const calls: SlackCall[] = [];
  const messages: SlackPostedMessage[] = [];
  let clock = 1_700_000_000;
  let sequence = 0;
  const nextTs = () => `${clock++}.${String(++sequence).padStart(6, '0')}`;

  const methods: Record<string, (args: Record<string, unknown>) => Record<string, unknown>> = {
    'auth.test': () => ({ ok: true, team_id: 'T0001', user_id: 'UBOT', bot_id: 'B0001' }),
    'chat.postMessage': (args) => {
      const channel = String(args.channel ?? '');
      if (!options.channels.includes(channel)) return { ok: false, error: 'channel_not_found' };
      const text = String(args.text ?? '');
      const ts = nextTs();
      const threadTs = args.thread_ts === undefined ? undefined : String(args.thread_ts);
      messages.push({ channel, ts, threadTs, text, history: [text] });
      return { ok: true, channel, ts, message: { text, ts, ...(threadTs ? { thread_ts: threadTs } : {}) } };
    },
    'chat.update': (args) => {
      const message = messages.find((each) => each.channel === args.channel && each.ts === args.ts);
      if (!message) return { ok: false, error: 'message_not_found' };
      message.text = String(args.text ?? '');
      message.history.push(message.text);
      return { ok: true, channel: message.channel, ts: message.ts, text: message.text };
    },
  };

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const type = String(request.headers['content-type'] ?? '');
      let args: Record<string, unknown> = {};
      if (type.startsWith('application/json')) args = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
      else args = Object.fromEntries(new URLSearchParams(raw));
      const method = (request.url ?? '').replace(/^\/api\//, '').split('?')[0]!;
      const authorization = request.headers.authorization;
      calls.push({ method, authorization, args });
      const answer = (body: Record<string, unknown>) => {
        response.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
        response.end(JSON.stringify(body));
      };
      if (request.method !== 'POST' || !(request.url ?? '').startsWith('/api/'))
        return answer({ ok: false, error: 'unknown_method' });
      if (!authorization?.startsWith('Bearer ')) return answer({ ok: false, error: 'not_authed' });
      if (authorization !== `Bearer ${options.token}`) return answer({ ok: false, error: 'invalid_auth' });
      const handle = methods[method];
      answer(handle ? handle(args) : { ok: false, error: 'unknown_method' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiUrl: `http://127.0.0.1:${port}/api/`,
    calls,
    messages,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
