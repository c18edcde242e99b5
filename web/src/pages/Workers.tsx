import type { ConnectedWorker } from '../api/types';
import { ResourceList } from '../components/ResourceList';
import { Empty, PageHeader, Time } from '../components/ui';
import { useResource } from '../hooks';
import { useClient } from '../session';

export function WorkersPage() {
  const client = useClient();
  const workers = useResource(
    (signal) => client.get<{ workers: ConnectedWorker[] }>('/agent/connected-self-hosted-workers', undefined, signal),
    'workers',
    { pollMs: 10_000 },
  );
  return (
    <>
      <PageHeader
        title="Connected workers"
        subtitle="Your team's own machines running runs that name them (config.worker_host)."
      />
      <ResourceList
        items={workers.data?.workers}
        state={workers}
        noun="the workers"
        empty={
          <Empty title="No worker is connected.">
            <p>Connect a machine with:</p>
            <pre>HANGAR_API_KEY=hgr_… hangar worker --server {window.location.origin} --worker-id build-box-1</pre>
          </Empty>
        }
        caption="Connected workers"
        rowKey={(worker) => worker.worker_host}
        columns={[
          { label: 'Worker host', cell: (worker) => worker.worker_host },
          { label: 'Connections', cell: (worker) => worker.connection_count },
          { label: 'Connected', cell: (worker) => <Time value={worker.connected_at} /> },
          { label: 'Last seen', cell: (worker) => <Time value={worker.last_seen_at} /> },
        ]}
      />
    </>
  );
}
