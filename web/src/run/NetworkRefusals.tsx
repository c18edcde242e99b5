// The hosts a run's network refused (issue 51): the API's account, and the refusals the live timeline brought since.
import type { ExplainedRun, TimelineEvent } from '../api/types';

/** One entry of GET /agent/runs/{id}'s network_refusals (src/network/schemas.ts, RefusalEntrySchema). */
interface Refusal {
  phase: 'setup' | 'agent';
  host: string;
  port?: number;
  reason: string;
  attempts: number;
  first_at: string;
  last_at: string;
  allow_line?: string;
}

const keyOf = (entry: Pick<Refusal, 'phase' | 'host' | 'port'>) => `${entry.phase} ${entry.host} ${entry.port ?? ''}`;

/** The run's account, with each host the timeline refused that the account does not have yet (counted once). */
export function refusalsOf(run: ExplainedRun, events: TimelineEvent[]): Refusal[] {
  // Read through its own type: the generated client types gain the field with the next `npm run gen:api-types`.
  const answered = (run as { network_refusals?: Refusal[] }).network_refusals ?? [];
  const entries = new Map(answered.map((entry) => [keyOf(entry), entry]));
  for (const event of events) {
    if (event.event_type !== 'network_refused' || !event.payload) continue;
    const seen = event.payload as Omit<Refusal, 'attempts' | 'last_at'>;
    if (!entries.has(keyOf(seen))) entries.set(keyOf(seen), { ...seen, attempts: 1, last_at: seen.first_at });
  }
  return [...entries.values()];
}

export function NetworkRefusals({ run, events }: { run: ExplainedRun; events: TimelineEvent[] }) {
  const refusals = refusalsOf(run, events);
  if (refusals.length === 0) return null;
  return (
    <section aria-labelledby="refusals-title" className="network-refusals">
      <h2 id="refusals-title">Refused hosts</h2>
      <p className="small">What the environment's network allow lists did not let this run reach.</p>
      <table>
        <thead>
          <tr>
            <th>Host</th>
            <th>Phase</th>
            <th>Why</th>
            <th>Attempts</th>
            <th>To allow it</th>
          </tr>
        </thead>
        <tbody>
          {refusals.map((entry) => (
            <tr key={keyOf(entry)}>
              <td>
                <code>{entry.port === undefined ? `${entry.host} (DNS)` : `${entry.host}:${entry.port}`}</code>
              </td>
              <td>{entry.phase}</td>
              <td>{entry.reason.replaceAll('_', ' ')}</td>
              <td>{entry.attempts}</td>
              <td>
                {entry.allow_line ? (
                  <>
                    <code>"{entry.allow_line}"</code> in <code>network.{entry.phase}.allow</code>
                  </>
                ) : (
                  ''
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
