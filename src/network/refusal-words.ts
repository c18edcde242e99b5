// A refused host in words, the same in a pull request's body, `hangar runs get` and `hangar runs events`. Imports
// nothing: the client verbs use it (network/cli.ts), and a client verb loads none of the server.

/** What a line says of a refusal: an entry of a run's account, or a `network_refused` event (no counts yet). */
export interface RefusalInWords {
  phase: string;
  host: string;
  /** Absent for a DNS question. */
  port?: number;
  reason: string;
  /** How often it was tried; absent on the timeline's first-attempt event. */
  attempts?: number;
  /** What to add to network.<phase>.allow (for hosts not on the list). */
  allow_line?: string;
}

/**
 * `other.test:443 (setup, not allowed, 2 times); to allow it: "other.test" in network.setup.allow`. `literal` marks
 * what a person would copy (Markdown wraps it in backticks; a terminal shows it as it is).
 */
export function refusalLine(entry: RefusalInWords, literal: (text: string) => string = (text) => text): string {
  const where = entry.port === undefined ? `${entry.host} (DNS)` : `${entry.host}:${entry.port}`;
  const times = entry.attempts === undefined ? [] : [entry.attempts === 1 ? 'once' : `${entry.attempts} times`];
  const why = [entry.phase, entry.reason.replaceAll('_', ' '), ...times].join(', ');
  const fix = entry.allow_line
    ? `; to allow it: ${literal(`"${entry.allow_line}"`)} in ${literal(`network.${entry.phase}.allow`)}`
    : '';
  return `${literal(where)} (${why})${fix}`;
}
