// A banner while runs wait because nothing can run them (queue_reason no_harness): the default start with no model
// key and no operator file runs nothing, and without this the runs would just sit QUEUED.
import { Link } from 'react-router';
import type { ExplainedRunItem, RunList } from '../api/types';
import { useResource } from '../hooks';
import { useClient } from '../session';

const POLL_MS = 10_000;

export function WaitingBanner() {
  const client = useClient();
  const waiting = useResource(
    (signal) =>
      client.get<RunList>(
        '/agent/runs',
        { state: ['QUEUED', 'PENDING'], limit: 100, sort_by: 'created_at', sort_order: 'asc' },
        signal,
      ),
    'waiting-banner',
    { pollMs: POLL_MS },
  );
  const stuck = (waiting.data?.runs ?? []).filter(
    (run) => (run as ExplainedRunItem).queue_reason?.code === 'no_harness',
  ) as ExplainedRunItem[];
  if (stuck.length === 0) return null;
  const more = waiting.data?.page_info.has_next_page ? ' or more' : '';
  return (
    <div className="banner banner-warning" role="alert">
      <p>
        <strong>
          {stuck.length === 1 ? 'A run waits' : `${stuck.length}${more} runs wait`} because no harness can run{' '}
          {stuck.length === 1 ? 'it' : 'them'}.
        </strong>{' '}
        {stuck[0]!.queue_reason!.message}
      </p>
      <p>
        <Link to="/runs?state=QUEUED">See the waiting runs</Link>
      </p>
    </div>
  );
}
