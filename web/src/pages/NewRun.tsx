import { type FormEvent, useState } from 'react';
import { useNavigate } from 'react-router';
import type { AgentIdentity, CreateRunRequest, CreateRunResponse, Environment } from '../api/types';
import { ErrorMessage, PageHeader } from '../components/ui';
import { useAction, useResource } from '../hooks';
import { useClient } from '../session';

export function NewRunPage() {
  const client = useClient();
  const navigate = useNavigate();
  const create = useAction();
  const environments = useResource(
    (signal) => client.get<{ environments: Environment[] }>('/agent/environments', { sort_by: 'name' }, signal),
    'environments',
  );
  const agents = useResource(
    (signal) => client.get<{ agents: AgentIdentity[] }>('/agent/identities', undefined, signal),
    'agents',
  );
  const [prompt, setPrompt] = useState('');

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const config: NonNullable<CreateRunRequest['config']> = {};
    if (text('environment_id')) config.environment_id = text('environment_id');
    if (text('model_id')) config.model_id = text('model_id');
    if (text('harness')) config.harness = { type: text('harness') };
    const body: CreateRunRequest = {
      prompt,
      ...(text('title') ? { title: text('title') } : {}),
      ...(text('agent_identity_uid') ? { agent_identity_uid: text('agent_identity_uid') } : {}),
      ...(Object.keys(config).length > 0 ? { config } : {}),
    };
    const created = await create.run(() => client.post<CreateRunResponse>('/agent/runs', body));
    if (created) navigate(`/runs/${encodeURIComponent(created.run_id)}`);
  };

  return (
    <>
      <PageHeader
        title="New run"
        subtitle="Send a prompt to an agent. Hangar queues the run and starts it when there is room."
      />
      <form className="card stack" onSubmit={submit}>
        <label>
          Prompt
          <textarea
            name="prompt"
            rows={8}
            required
            value={prompt}
            onChange={(event) => setPrompt(event.target.value)}
          />
        </label>
        <label>
          Title <span className="muted">(optional; made from the prompt otherwise)</span>
          <input name="title" maxLength={500} />
        </label>
        <div className="filter-grid">
          <label>
            Environment
            <select name="environment_id" defaultValue="">
              <option value="">None</option>
              {environments.data?.environments.map((environment) => (
                <option key={environment.uid} value={environment.uid}>
                  {environment.config.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Agent identity
            <select name="agent_identity_uid" defaultValue="">
              <option value="">Me</option>
              {agents.data?.agents.map((agent) => (
                <option key={agent.uid} value={agent.uid} disabled={!agent.available}>
                  {agent.name}
                  {agent.available ? '' : ' (over the plan limit)'}
                </option>
              ))}
            </select>
          </label>
          <label>
            Harness <span className="muted">(optional)</span>
            <input name="harness" placeholder="the server's default" />
          </label>
          <label>
            Model <span className="muted">(optional)</span>
            <input name="model_id" />
          </label>
        </div>
        <ErrorMessage error={environments.error ?? agents.error} title="Could not load the choices" />
        <ErrorMessage error={create.error} title="Could not create the run" />
        <div className="row">
          <button type="submit" disabled={create.pending || !prompt.trim()}>
            {create.pending ? 'Starting…' : 'Start run'}
          </button>
        </div>
      </form>
    </>
  );
}
