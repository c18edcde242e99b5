import { type FormEvent, useState } from 'react';
import { seg } from '../api/client';
import type { Runner, RunnerList, RunnerRequest } from '../api/types';
import { ResourceList } from '../components/ResourceList';
import { DeleteButton, Empty, ErrorMessage, FormActions, PageHeader, Time } from '../components/ui';
import { useAction, useResource } from '../hooks';
import { useClient } from '../session';

/** A runner's shape in words: its limits, and on Kubernetes its runtime class and whether it places its pods. */
function shapeOf(runner: Runner): string {
  const { cpus, memory, pids } = runner.limits ?? {};
  return [
    cpus === undefined ? undefined : `${cpus} CPUs`,
    memory,
    pids === undefined ? undefined : `${pids} processes`,
    runner.kubernetes?.runtime_class_name && `runtime class ${runner.kubernetes.runtime_class_name}`,
    runner.kubernetes?.pod_template && 'own placement',
  ]
    .filter(Boolean)
    .join(', ');
}

function RunnerForm({ sandbox, onSaved, onCancel }: { sandbox: string; onSaved(): void; onCancel(): void }) {
  const client = useClient();
  const save = useAction();
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const limits = {
      ...(text('cpus') ? { cpus: Number(text('cpus')) } : {}),
      ...(text('memory') ? { memory: text('memory') } : {}),
      ...(text('pids') ? { pids: Number(text('pids')) } : {}),
    };
    const body: RunnerRequest = {
      name: text('name'),
      ...(text('description') ? { description: text('description') } : {}),
      ...(Object.keys(limits).length > 0 ? { limits } : {}),
      ...(text('runtime_class_name') ? { kubernetes: { runtime_class_name: text('runtime_class_name') } } : {}),
    };
    if ((await save.run(() => client.post('/runners', body))) !== undefined) onSaved();
  };
  return (
    <form className="card stack" onSubmit={submit} aria-label="New runner">
      <label>
        Name
        <input name="name" required maxLength={100} />
      </label>
      <label>
        Description
        <input name="description" maxLength={2000} />
      </label>
      <div className="filter-grid">
        <label>
          CPUs
          <input name="cpus" inputMode="decimal" placeholder="e.g. 1.5" />
        </label>
        <label>
          Memory
          <input name="memory" placeholder="e.g. 4g" />
        </label>
        <label>
          Processes
          <input name="pids" inputMode="numeric" placeholder="e.g. 1024" />
        </label>
        {sandbox === 'kubernetes' && (
          <label>
            Runtime class
            <input name="runtime_class_name" placeholder="e.g. gvisor" />
          </label>
        )}
      </div>
      <ErrorMessage error={save.error} title="Could not create the runner" />
      <FormActions submit="Create runner" pending={save.pending} onCancel={onCancel} />
    </form>
  );
}

/** The team's runners (GET /runners): the sandbox kind and shape runs, agents and environments name. */
export function RunnersPage() {
  const client = useClient();
  const runners = useResource((signal) => client.get<RunnerList>('/runners', undefined, signal), 'runners');
  const remove = useAction();
  const [creating, setCreating] = useState(false);
  const fallback = runners.data?.default;
  return (
    <>
      <PageHeader
        title="Runners"
        subtitle={
          fallback
            ? `What runs execute with: a run's runner, else its agent's, else its environment's. Without one: ${fallback.sandbox}, ${fallback.limits.cpus} CPUs, ${fallback.limits.memory}, ${fallback.limits.pids} processes (at most ${fallback.maximums.cpus} CPUs, ${fallback.maximums.memory}, ${fallback.maximums.pids} processes).`
            : "What runs execute with: a run's runner, else its agent's, else its environment's."
        }
      >
        {!creating && (
          <button type="button" onClick={() => setCreating(true)}>
            New runner
          </button>
        )}
      </PageHeader>
      {creating && fallback && (
        <RunnerForm
          sandbox={fallback.sandbox}
          onCancel={() => setCreating(false)}
          onSaved={() => {
            setCreating(false);
            void runners.reload();
          }}
        />
      )}
      <ErrorMessage error={remove.error} title="Could not delete the runner" />
      <ResourceList
        items={runners.data?.runners}
        state={runners}
        noun="the runners"
        empty={<Empty title="No runners yet.">{<p>Runs take the server's default shape.</p>}</Empty>}
        caption="Runners"
        rowKey={(runner) => runner.uid}
        columns={[
          {
            label: 'Name',
            cell: (runner) => (
              <>
                {runner.name}
                <div className="muted small">
                  <code>{runner.uid}</code>
                  {runner.description && ` · ${runner.description}`}
                </div>
              </>
            ),
          },
          { label: 'Sandbox', cell: (runner) => runner.sandbox ?? <span className="muted">server's</span> },
          { label: 'Shape', cell: (runner) => shapeOf(runner) || <span className="muted">defaults</span> },
          {
            label: 'Defined by',
            cell: (runner) =>
              runner.factory_uid ? `factory ${runner.factory_uid}` : <span className="muted">API</span>,
          },
          { label: 'Updated', cell: (runner) => <Time value={runner.updated_at} /> },
          {
            label: 'Actions',
            labelHidden: true,
            cell: (runner) => (
              <DeleteButton
                what={runner.name}
                question={`Delete the runner "${runner.name}"? Agents and environments that default to it refuse their runs until changed.`}
                pending={remove.pending}
                onDelete={async () => {
                  if ((await remove.run(() => client.delete(`/runners/${seg(runner.uid)}`))) !== undefined)
                    void runners.reload();
                }}
              />
            ),
          },
        ]}
      />
    </>
  );
}
