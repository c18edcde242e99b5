// A run's timeline: each event in words, its time, the step's duration and what its payload adds.
import type { TimelineEvent } from '../api/types';
import { Json } from '../components/ui';
import { eventLabel, secondsInWords, stepDurations } from '../words';

const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const fullTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'long' });

/** What an event's payload adds in words: the setup command or repository and how long it took. */
function eventDetail(event: TimelineEvent): string | undefined {
  const payload = (event.payload ?? {}) as Record<string, unknown>;
  const took = typeof payload.duration_ms === 'number' ? ` (${secondsInWords(payload.duration_ms / 1000)})` : '';
  if (typeof payload.command === 'string') return `${payload.command}${took}`;
  if (typeof payload.repo === 'string') return `${payload.repo}${took}`;
  if (typeof payload.message === 'string') return payload.message;
  if (typeof payload.reason === 'string') return payload.reason;
  // A follow-up sent through the run's EDITOR share link, not with a key (src/runs/sharing/).
  if (payload.via === 'shared_link') return 'sent through the share link';
  return undefined;
}

export function TimelineView({ events }: { events: TimelineEvent[] }) {
  if (events.length === 0) return <p className="muted">Nothing has happened yet.</p>;
  const durations = stepDurations(events);
  return (
    <ol className="timeline">
      {events.map((event, index) => {
        const at = new Date(event.occurred_at);
        const detail = eventDetail(event);
        return (
          <li key={event.event_uuid}>
            <span className="timeline-head">
              <span className="timeline-type" title={`API event: ${event.event_type}`}>
                {eventLabel(event.event_type)}
              </span>
              <time dateTime={event.occurred_at} title={fullTime.format(at)} className="timeline-at">
                {clock.format(at)}
              </time>
            </span>
            {durations[index] && <span className="timeline-step">{durations[index]}</span>}
            {detail && <span className="timeline-detail">{detail}</span>}
            {event.execution_id && event.execution_id !== '1' && (
              <span className="muted small"> Execution {event.execution_id}</span>
            )}
            {event.payload && Object.keys(event.payload).length > 0 && (
              <details>
                <summary>Details</summary>
                <Json value={event.payload} />
              </details>
            )}
          </li>
        );
      })}
    </ol>
  );
}
