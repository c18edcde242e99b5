import type { ConnectedWorker } from '../api/types';
import { Empty, ErrorMessage, Loading, PageHeader, Time } from '../components/ui';
import { useResource } from '../hooks';
import { useClient } from '../session';

export function WorkersPage() {
  const client = useClient();
  const workers = useResource(
    (signal) => client.get<{ workers: ConnectedWorker[] }>('/agent/connected-self-hosted-workers', undefined, signal),
    'workers',
    { pollMs: 10_000 },
  );
  const list = workers.data?.workers;
  return (
    <>
      <PageHeader
        title="Connected workers"
        subtitle="Your team's own machines running runs that name them (config.worker_host)."
      />
      <ErrorMessage error={workers.error} title="Could not load the workers" />
      {workers.loading && !list && <Loading what="Loading workers" />}
      {list && list.length === 0 && (
        <Empty title="No worker is connected.">
          <p>Connect a machine with:</p>
          <pre>HANGAR_API_KEY=hgr_… hangar worker --server {window.location.origin} --worker-id build-box-1</pre>
        </Empty>
      )}
      {list && list.length > 0 && (
        <table className="responsive">
          <caption className="visually-hidden">Connected workers</caption>
          <thead>
            <tr>
              <th scope="col">Worker host</th>
              <th scope="col">Connections</th>
              <th scope="col">Connected</th>
              <th scope="col">Last seen</th>
            </tr>
          </thead>
          <tbody>
            {list.map((worker) => (
              <tr key={worker.worker_host}>
                <th scope="row" data-label="Worker host">
                  {worker.worker_host}
                </th>
                <td data-label="Connections">{worker.connection_count}</td>
                <td data-label="Connected">
                  <Time value={worker.connected_at} />
                </td>
                <td data-label="Last seen">
                  <Time value={worker.last_seen_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
