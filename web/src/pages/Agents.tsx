import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { seg } from '../api/client';
import type { AgentIdentity } from '../api/types';
import { DeleteButton, Empty, ErrorMessage, Flag, FormActions, Loading, PageHeader, Time } from '../components/ui';
import { useAction, useResource } from '../hooks';
import { useClient } from '../session';

function AgentForm({ onSaved, onCancel }: { onSaved(): void; onCancel(): void }) {
  const client = useClient();
  const save = useAction();
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const body: Record<string, string> = {};
    for (const name of ['name', 'description', 'base_model', 'environment_id', 'worker_host', 'prompt']) {
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
  const remove = useAction();
  const [creating, setCreating] = useState(false);
  const list = agents.data?.agents;
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
          onCancel={() => setCreating(false)}
          onSaved={() => {
            setCreating(false);
            void agents.reload();
          }}
        />
      )}
      <ErrorMessage error={agents.error} title="Could not load the agent identities" />
      <ErrorMessage error={remove.error} title="Could not delete the agent identity" />
      {agents.loading && !list && <Loading what="Loading agent identities" />}
      {list && list.length === 0 && <Empty title="No agent identities yet." />}
      {list && list.length > 0 && (
        <table className="responsive">
          <caption className="visually-hidden">Agent identities</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Available</th>
              <th scope="col">On behalf of</th>
              <th scope="col">GitHub as</th>
              <th scope="col">Model</th>
              <th scope="col">Worker host</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((agent) => (
              <tr key={agent.uid}>
                <th scope="row" data-label="Name">
                  {agent.name}
                  {agent.description && <div className="muted small">{agent.description}</div>}
                </th>
                <td data-label="Type">{agent.agent_type}</td>
                <td data-label="Available">
                  <Flag on={agent.available} yes="Available" no="Over the plan limit" />
                </td>
                <td data-label="On behalf of">
                  <Flag on={agent.on_behalf_of_enabled} yes="Members" no="Off" />
                </td>
                <td data-label="GitHub as">
                  {agent.credential_strategy === 'CREATOR' ? 'creator' : <span className="muted">executor</span>}
                </td>
                <td data-label="Model">{agent.base_model ?? <span className="muted">default</span>}</td>
                <td data-label="Worker host">{agent.worker_host ?? <span className="muted">server</span>}</td>
                <td data-label="Created">
                  <Time value={agent.created_at} />
                </td>
                <td data-label="Actions" className="row">
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
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
