import { createRequire } from 'node:module';
import type { FastifyBaseLogger } from 'fastify';
import { type LoggerOptions, pino } from 'pino';
import type { PrettyOptions } from 'pino-pretty';
import { redactCredentials, serializeRequest } from './http/log-redaction.js';
import { logContext } from './log-context.js';
import { redactActiveValues } from './redaction/active.js';

/**
 * The process's one logger, shared by the HTTP app and the background loops. `false` is silent (tests, benchmarks),
 * `true` pino's defaults, an object those pino options; by default, the configured level. Whatever the options,
 * the credentials requests carry are kept out: headers (API keys) are never logged, and every line is written with
 * the credentials of the URLs in it redacted (a url_token webhook's token, a download link's signature, the model
 * proxy's `?key=`), whichever field or message holds the URL; and the secret values of the runs executing in this
 * process, with the operator's provider keys, are replaced by `[REDACTED:NAME]` (see redaction/active.ts). Lines
 * carry the fields of the work in progress (a run's `run_id`) and the active span's `trace_id` (log-context.ts).
 */
export function createLogger(
  level: string,
  option: boolean | object | LogCapture | undefined,
  /** `pretty`: readable lines for a terminal (HANGAR_LOG_FORMAT); the redaction applies before either. */
  format: 'pretty' | 'json' = 'json',
): FastifyBaseLogger {
  if (option === false) return pino({ enabled: false });
  const capture = option && typeof (option as LogCapture).capture === 'function' ? (option as LogCapture) : undefined;
  const redacting = (options: LoggerOptions): FastifyBaseLogger =>
    pino(
      {
        mixin: logContext,
        ...options,
        hooks: { ...options.hooks, streamWrite: (line) => redactActiveValues(redactCredentials(line)) },
      },
      capture
        ? { write: (line: string) => capture.capture(line) }
        : // Synchronous, in this thread: a line is on the terminal before the process can exit.
          format === 'pretty'
          ? prettyStream({ sync: true, translateTime: 'HH:MM:ss.l', ignore: 'pid,hostname' })
          : undefined,
    );
  if (option === true) return redacting({});
  if (option && !capture) return redacting(option as LoggerOptions);
  return redacting({
    level,
    redact: ['req.headers.authorization', 'req.headers["x-api-key"]'],
    serializers: { req: serializeRequest },
  });
}

/** The lines, as written (redacted), handed to `capture` instead of stdout: a test reads what its server logs. */
export interface LogCapture {
  capture(line: string): void;
}

/** pino-pretty, loaded only when wanted: a JSON-logging server does not carry it. */
function prettyStream(options: PrettyOptions): NodeJS.WritableStream {
  const load = createRequire(import.meta.url)('pino-pretty') as {
    default: (options: PrettyOptions) => NodeJS.WritableStream;
  };
  return load.default(options);
}
