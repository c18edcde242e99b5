import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { serializeRequest } from './http/log-redaction.js';

/**
 * The process's one logger, shared by the HTTP app and the background loops. `false` is silent (tests, benchmarks),
 * `true` pino's defaults, an object those pino options; by default, the configured level, with the credentials
 * requests carry kept out: headers (API keys) are never logged, and the URLs that carry one (a url_token webhook's
 * token, a download link's signature) are redacted.
 */
export function createLogger(level: string, option: boolean | object | undefined): FastifyBaseLogger {
  if (option === false) return pino({ enabled: false });
  if (option === true) return pino();
  if (option) return pino(option);
  return pino({
    level,
    redact: ['req.headers.authorization', 'req.headers["x-api-key"]'],
    serializers: { req: serializeRequest },
  });
}
