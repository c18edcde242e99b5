import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { seg } from '../api/client';
import type { AgentIdentity, RunnerList } from '../api/types';
import { ResourceList } from '../components/ResourceList';
import { DeleteButton, Empty, ErrorMessage, Flag, FormActions, PageHeader, Time } from '../components/ui';
import { useAction, useResource } from '../hooks';
import { useClient } from '../session';

function AgentForm({
  runners,
  onSaved,
  onCancel,
}: {
  runners: RunnerList['runners'];
  onSaved(): void;
  onCancel(): void;
}) {
  const client = useClient();
  const save = useAction();
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const body: Record<string, string> = {};
    for (const name of [
      'name',
      'description',
      'base_model',
      'environment_id',
      'worker_host',
      'default_runner_uid',
      'prompt',
    ]) {
      const value = String(form.get(name) ?? '').trim();
      if (value) body[name] = value;
    }
    if ((await save.run(() => client.post('/agent/identities', body))) !== undefined) onSaved();
  };
  return (
    <form className="card stack" onSubmit={submit} aria-label="New agent identity">
      <label>
        Name
        <input name="name" required maxLength={200} />
      </label>
      <label>
        Description
        <input name="description" maxLength={2000} />
      </label>
      <div className="filter-grid">
        <label>
          Base model
          <input name="base_model" />
        </label>
        <label>
          Environment ID
          <input name="environment_id" />
        </label>
        <label>
          Worker host
          <input name="worker_host" />
        </label>
        <label>
          Default runner
          <select name="default_runner_uid" defaultValue="">
            <option value="">None: the environment's, else the server's</option>
            {runners.map((runner) => (
              <option key={runner.uid} value={runner.uid}>
                {runner.name}
              </option>
            ))}
          </select>
        </label>
      </div>
      <label>
        Prompt
        <textarea name="prompt" rows={3} />
      </label>
      <ErrorMessage error={save.error} title="Could not create the agent identity" />
      <FormActions submit="Create agent identity" pending={save.pending} onCancel={onCancel} />
    </form>
  );
}

export function AgentsPage() {
  const client = useClient();
  const agents = useResource(
    (signal) => client.get<{ agents: AgentIdentity[] }>('/agent/identities', undefined, signal),
    'agents',
  );
  const runners = useResource((signal) => client.get<RunnerList>('/runners', undefined, signal), 'runners');
  const runnerName = (uid: string) => runners.data?.runners.find((runner) => runner.uid === uid)?.name ?? uid;
  const remove = useAction();
  const [creating, setCreating] = useState(false);
  return (
    <>
      <PageHeader
        title="Agent identities"
        subtitle="Agents your team owns: they execute runs with their own model, environment and keys."
      >
        {!creating && (
          <button type="button" onClick={() => setCreating(true)}>
            New agent identity
          </button>
        )}
      </PageHeader>
      {creating && (
        <AgentForm
          runners={runners.data?.runners ?? []}
          onCancel={() => setCreating(false)}
          onSaved={() => {
            setCreating(false);
            void agents.reload();
          }}
        />
      )}
      <ErrorMessage error={remove.error} title="Could not delete the agent identity" />
      <ResourceList
        items={agents.data?.agents}
        state={agents}
        noun="the agent identities"
        empty={<Empty title="No agent identities yet." />}
        caption="Agent identities"
        rowKey={(agent) => agent.uid}
        columns={[
          {
            label: 'Name',
            cell: (agent) => (
              <>
                {agent.name}
                {agent.description && <div className="muted small">{agent.description}</div>}
              </>
            ),
          },
          { label: 'Type', cell: (agent) => agent.agent_type },
          {
            label: 'Available',
            cell: (agent) => <Flag on={agent.available} yes="Available" no="Over the plan limit" />,
          },
          { label: 'On behalf of', cell: (agent) => <Flag on={agent.on_behalf_of_enabled} yes="Members" no="Off" /> },
          {
            label: 'GitHub as',
            cell: (agent) =>
              agent.credential_strategy === 'CREATOR' ? 'creator' : <span className="muted">executor</span>,
          },
          { label: 'Model', cell: (agent) => agent.base_model ?? <span className="muted">default</span> },
          { label: 'Worker host', cell: (agent) => agent.worker_host ?? <span className="muted">server</span> },
          {
            label: 'Runner',
            cell: (agent) =>
              agent.default_runner_uid ? runnerName(agent.default_runner_uid) : <span className="muted">none</span>,
          },
          { label: 'Created', cell: (agent) => <Time value={agent.created_at} /> },
          {
            label: 'Actions',
            labelHidden: true,
            className: 'row',
            cell: (agent) => (
              <>
                <Link className="button secondary" to={`/runs?executor=${encodeURIComponent(agent.uid)}`}>
                  Runs
                </Link>
                <DeleteButton
                  what={agent.name}
                  question={`Delete the agent identity "${agent.name}" and all of its API keys?`}
                  pending={remove.pending}
                  onDelete={async () => {
                    if ((await remove.run(() => client.delete(`/agent/identities/${seg(agent.uid)}`))) !== undefined)
                      void agents.reload();
                  }}
                />
              </>
            ),
          },
        ]}
      />
    </>
  );
}
