import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { seg } from '../api/client';
import type { CreateEnvironmentRequest, Environment } from '../api/types';
import { ResourceList } from '../components/ResourceList';
import { DeleteButton, Empty, ErrorMessage, FormActions, PageHeader, Time } from '../components/ui';
import { useAction, useResource } from '../hooks';
import { useClient } from '../session';

const lines = (value: FormDataEntryValue | null) =>
  String(value ?? '')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);

function EnvironmentForm({ onSaved, onCancel }: { onSaved(): void; onCancel(): void }) {
  const client = useClient();
  const save = useAction();
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const retention = String(form.get('retention') ?? '').trim();
    const image = String(form.get('docker_image') ?? '').trim();
    const pullRequest = String(form.get('pull_request') ?? '');
    const repos = lines(form.get('repos')).map((line) => {
      const [owner = '', repo = ''] = line.split('/');
      return { owner, repo };
    });
    const body: CreateEnvironmentRequest = {
      name: String(form.get('name')).trim(),
      description: String(form.get('description') ?? '').trim() || null,
      ...(image ? { docker_image: image } : {}),
      github_repos: repos,
      setup_commands: lines(form.get('setup')),
      failure_session_retention_minutes: retention ? Number(retention) : null,
      ...(pullRequest === 'draft' || pullRequest === 'off' ? { github: { pull_request: pullRequest } } : {}),
    };
    if ((await save.run(() => client.post('/environments', body))) !== undefined) onSaved();
  };
  return (
    <form className="card stack" onSubmit={submit} aria-label="New environment">
      <label>
        Name
        <input name="name" required maxLength={200} />
      </label>
      <label>
        Description
        <input name="description" maxLength={2000} />
      </label>
      <label>
        Docker image
        <input name="docker_image" placeholder="node:20" />
      </label>
      <label>
        Repositories <span className="muted">(owner/repo, one a line)</span>
        <textarea name="repos" rows={3} placeholder="acme/api" />
      </label>
      <label>
        Setup commands <span className="muted">(one a line, run in order)</span>
        <textarea name="setup" rows={3} placeholder="npm ci" />
      </label>
      <label>
        Pull requests <span className="muted">(when a run ends with changes, unless the run says otherwise)</span>
        <select name="pull_request" defaultValue="open">
          <option value="open">Open a pull request</option>
          <option value="draft">Open a draft pull request</option>
          <option value="off">Leave the changes</option>
        </select>
      </label>
      <label>
        Keep a failed setup for debugging (minutes, 1-60)
        <input name="retention" type="number" min={1} max={60} />
      </label>
      <ErrorMessage error={save.error} title="Could not create the environment" />
      <FormActions submit="Create environment" pending={save.pending} onCancel={onCancel} />
    </form>
  );
}

/** What Hangar does with a run's changes, by the environment's `github.pull_request` (issue 30). */
const PULL_REQUEST_MODES = { open: 'opened', draft: 'opened as drafts', off: 'not opened' } as const;

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MB`;
}

function EnvironmentCard({ environment, onChanged }: { environment: Environment; onChanged(): void }) {
  const client = useClient();
  const remove = useAction();
  const { config } = environment;
  return (
    <li className="card item">
      <div className="item-head">
        <h2>{config.name}</h2>
        {environment.setup_failed && <span className="badge state-failed">Setup failed</span>}
        <span className="badge">{environment.access}</span>
      </div>
      {config.description && <p>{config.description}</p>}
      <dl className="facts">
        <dt>ID</dt>
        <dd>
          <code>{environment.uid}</code>
        </dd>
        <dt>Image</dt>
        <dd>{config.docker_image ?? <span className="muted">default</span>}</dd>
        <dt>Repositories</dt>
        <dd>
          {config.github_repos.length ? (
            config.github_repos.map((repo) => `${repo.owner}/${repo.repo}`).join(', ')
          ) : (
            <span className="muted">none</span>
          )}
        </dd>
        {config.github_repos.length > 0 && (
          <>
            <dt>Pull requests</dt>
            <dd>{PULL_REQUEST_MODES[config.github?.pull_request ?? 'open']}</dd>
          </>
        )}
        <dt>Runner</dt>
        <dd>
          {config.default_runner_uid ? <code>{config.default_runner_uid}</code> : <span className="muted">none</span>}
        </dd>
        <dt>Setup</dt>
        <dd>
          {config.setup_commands.length ? (
            <code>{config.setup_commands.join(' && ')}</code>
          ) : (
            <span className="muted">none</span>
          )}
        </dd>
        <dt>Last run</dt>
        <dd>
          {/* A run that never started (a failed setup, one still queued) is a run too: the latest creation counts. */}
          <Time value={environment.last_task_created ?? environment.last_task_run_timestamp} />
          {environment.last_task_created && !environment.last_task_run_timestamp && (
            <span className="muted"> (none has started)</span>
          )}
        </dd>
        <dt>Updated</dt>
        <dd>
          <Time value={environment.last_updated} />
          {environment.last_editor && (
            <span className="muted"> by {environment.last_editor.display_name ?? environment.last_editor.uid}</span>
          )}
        </dd>
        <dt>Snapshot</dt>
        <dd>
          {/* The setup snapshot your team's next run starts from when nothing changed (issue 28). */}
          {environment.snapshot ? (
            <>
              taken <Time value={environment.snapshot.created_at} />, {megabytes(environment.snapshot.size_bytes)}, key{' '}
              <code>{environment.snapshot.key}</code>
            </>
          ) : (
            <span className="muted">none: the next run sets up from nothing</span>
          )}
        </dd>
      </dl>
      <ErrorMessage error={remove.error} title="Could not delete the environment" />
      <div className="row">
        <Link className="button secondary" to={`/runs?environment_id=${encodeURIComponent(environment.uid)}`}>
          Runs
        </Link>
        {environment.access === 'owner' && (
          <DeleteButton
            what={config.name}
            question={`Delete the environment "${config.name}"?`}
            pending={remove.pending}
            onDelete={async () => {
              if ((await remove.run(() => client.delete(`/environments/${seg(environment.uid)}`))) !== undefined)
                onChanged();
            }}
          />
        )}
      </div>
    </li>
  );
}

export function EnvironmentsPage() {
  const client = useClient();
  const environments = useResource(
    (signal) => client.get<{ environments: Environment[] }>('/agent/environments', undefined, signal),
    'environments',
  );
  const [creating, setCreating] = useState(false);
  const list = environments.data?.environments;
  return (
    <>
      <PageHeader
        title="Environments"
        subtitle="Where runs execute: an image, repositories cloned into the workspace, setup commands."
      >
        {!creating && (
          <button type="button" onClick={() => setCreating(true)}>
            New environment
          </button>
        )}
      </PageHeader>
      {creating && (
        <EnvironmentForm
          onCancel={() => setCreating(false)}
          onSaved={() => {
            setCreating(false);
            void environments.reload();
          }}
        />
      )}
      <ResourceList
        items={list}
        state={environments}
        noun="the environments"
        empty={
          <Empty title="No environments yet.">
            <p>Runs without one start in an empty workspace.</p>
          </Empty>
        }
        card={(environment) => (
          <EnvironmentCard
            key={environment.uid}
            environment={environment}
            onChanged={() => void environments.reload()}
          />
        )}
      />
    </>
  );
}
