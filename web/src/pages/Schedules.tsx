import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { seg } from '../api/client';
import type { AgentIdentity, Schedule, ScheduleRequest } from '../api/types';
import { ResourceList } from '../components/ResourceList';
import { DeleteButton, Empty, ErrorMessage, Flag, FormActions, PageHeader, Time } from '../components/ui';
import { useAction, useResource } from '../hooks';
import { useClient } from '../session';

function ScheduleForm({
  schedule,
  agents,
  onSaved,
  onCancel,
}: {
  schedule?: Schedule;
  agents: AgentIdentity[];
  onSaved(): void;
  onCancel(): void;
}) {
  const client = useClient();
  const save = useAction();
  const prefix = schedule ? `edit-${schedule.id}` : 'new';

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const agentUid = String(form.get('agent_uid') ?? '');
    const mode = String(form.get('mode') ?? 'normal') as NonNullable<ScheduleRequest['mode']>;
    const body: ScheduleRequest = {
      name: String(form.get('name')).trim(),
      cron_schedule: String(form.get('cron_schedule')).trim(),
      prompt: String(form.get('prompt')),
      enabled: form.get('enabled') === 'on',
      ...(agentUid ? { agent_uid: agentUid } : {}),
      ...(mode !== 'normal' ? { mode } : {}),
      // A PUT replaces the whole schedule: keep what this form does not edit.
      ...(schedule?.agent_config ? { agent_config: schedule.agent_config } : {}),
      ...(schedule ? { metadata: schedule.metadata } : {}),
    };
    const saved = await save.run(() =>
      schedule ? client.put(`/agent/schedules/${seg(schedule.id)}`, body) : client.post('/agent/schedules', body),
    );
    if (saved !== undefined) onSaved();
  };

  return (
    <form className="card stack" onSubmit={submit} aria-label={schedule ? `Edit ${schedule.name}` : 'New schedule'}>
      <label>
        Name
        <input name="name" required maxLength={200} defaultValue={schedule?.name} />
      </label>
      <label>
        Cron schedule (UTC)
        <input
          name="cron_schedule"
          required
          defaultValue={schedule?.cron_schedule}
          placeholder="0 3 * * *"
          aria-describedby={`${prefix}-cron-help`}
        />
      </label>
      <p id={`${prefix}-cron-help`} className="muted small">
        5 fields (minute hour day month weekday), 6 with leading seconds, or <code>@daily</code>, <code>@hourly</code>…
      </p>
      <label>
        Prompt
        <textarea name="prompt" rows={4} required defaultValue={schedule?.prompt} />
      </label>
      <label>
        Agent identity
        <select name="agent_uid" defaultValue={schedule?.agent_uid ?? ''}>
          <option value="">None (runs as the schedule's creator)</option>
          {agents.map((agent) => (
            <option key={agent.uid} value={agent.uid}>
              {agent.name}
            </option>
          ))}
        </select>
      </label>
      <label>
        Mode of its runs
        <select name="mode" defaultValue={schedule?.mode ?? 'normal'}>
          <option value="normal">normal</option>
          <option value="plan">plan</option>
          <option value="orchestrate">orchestrate</option>
        </select>
      </label>
      <label className="checkbox">
        <input type="checkbox" name="enabled" defaultChecked={schedule?.enabled ?? true} />
        Enabled
      </label>
      <ErrorMessage error={save.error} title="Could not save the schedule" />
      <FormActions submit={schedule ? 'Save changes' : 'Create schedule'} pending={save.pending} onCancel={onCancel} />
    </form>
  );
}

function ScheduleCard({
  schedule,
  agents,
  onChanged,
}: {
  schedule: Schedule;
  agents: AgentIdentity[];
  onChanged(): void;
}) {
  const client = useClient();
  const action = useAction();
  const [editing, setEditing] = useState(false);
  if (editing)
    return (
      <li>
        <ScheduleForm
          schedule={schedule}
          agents={agents}
          onCancel={() => setEditing(false)}
          onSaved={() => {
            setEditing(false);
            onChanged();
          }}
        />
      </li>
    );

  const act = async (work: () => Promise<unknown>) => {
    if ((await action.run(work)) !== undefined) onChanged();
  };
  const agent = agents.find((candidate) => candidate.uid === schedule.agent_uid);
  return (
    <li className="card item" aria-labelledby={`schedule-${schedule.id}`}>
      <div className="item-head">
        <h2 id={`schedule-${schedule.id}`}>{schedule.name}</h2>
        <Flag on={schedule.enabled} yes="Active" no="Paused" />
      </div>
      <dl className="facts">
        <dt>Cron</dt>
        <dd>
          <code>{schedule.cron_schedule}</code>
        </dd>
        <dt>Next run</dt>
        <dd>{schedule.enabled ? <Time value={schedule.history.next_run} /> : <span className="muted">paused</span>}</dd>
        <dt>Last ran</dt>
        <dd>
          <Time value={schedule.history.last_ran} />
        </dd>
        {agent && (
          <>
            <dt>Agent</dt>
            <dd>{agent.name}</dd>
          </>
        )}
        {schedule.mode && schedule.mode !== 'normal' && (
          <>
            <dt>Mode</dt>
            <dd>{schedule.mode}</dd>
          </>
        )}
        {schedule.environment && (
          <>
            <dt>Environment</dt>
            <dd>{String(schedule.environment.name ?? '')}</dd>
          </>
        )}
        {Object.keys(schedule.metadata).length > 0 && (
          <>
            <dt>Metadata</dt>
            <dd>
              {Object.entries(schedule.metadata).map(([key, value]) => (
                <code key={key}>
                  {key}={value}{' '}
                </code>
              ))}
            </dd>
          </>
        )}
        <dt>Updated</dt>
        <dd>
          <Time value={schedule.updated_at} /> by {schedule.updated_by.display_name ?? schedule.updated_by.uid}
        </dd>
      </dl>
      <p className="prompt-preview">{schedule.prompt}</p>
      {schedule.last_spawn_error && (
        <p className="error" role="alert">
          The last tick could not start a run: {schedule.last_spawn_error}
        </p>
      )}
      <ErrorMessage error={action.error} />
      <div className="row">
        <button
          type="button"
          className="secondary"
          onClick={() => setEditing(true)}
          aria-label={`Edit ${schedule.name}`}
        >
          Edit
        </button>
        {schedule.enabled ? (
          <button
            type="button"
            className="secondary"
            disabled={action.pending}
            onClick={() => act(() => client.post(`/agent/schedules/${seg(schedule.id)}/pause`))}
            aria-label={`Pause ${schedule.name}`}
          >
            Pause
          </button>
        ) : (
          <button
            type="button"
            className="secondary"
            disabled={action.pending}
            onClick={() => act(() => client.post(`/agent/schedules/${seg(schedule.id)}/resume`))}
            aria-label={`Resume ${schedule.name}`}
          >
            Resume
          </button>
        )}
        <Link className="button secondary" to={`/runs?schedule_id=${encodeURIComponent(schedule.id)}`}>
          Runs
        </Link>
        <DeleteButton
          what={schedule.name}
          question={`Delete the schedule "${schedule.name}"? Its past runs stay.`}
          pending={action.pending}
          onDelete={() => act(() => client.delete(`/agent/schedules/${seg(schedule.id)}`))}
        />
      </div>
    </li>
  );
}

export function SchedulesPage() {
  const client = useClient();
  const schedules = useResource(
    (signal) => client.get<{ schedules: Schedule[] }>('/agent/schedules', undefined, signal),
    'schedules',
    { pollMs: 15_000 },
  );
  const agents = useResource(
    (signal) => client.get<{ agents: AgentIdentity[] }>('/agent/identities', undefined, signal),
    'agents',
  );
  const [creating, setCreating] = useState(false);
  const list = schedules.data?.schedules;

  return (
    <>
      <PageHeader title="Schedules" subtitle="Agents that start a run on a cron schedule (UTC).">
        {!creating && (
          <button type="button" onClick={() => setCreating(true)}>
            New schedule
          </button>
        )}
      </PageHeader>
      {creating && (
        <ScheduleForm
          agents={agents.data?.agents ?? []}
          onCancel={() => setCreating(false)}
          onSaved={() => {
            setCreating(false);
            void schedules.reload();
          }}
        />
      )}
      <ResourceList
        items={list}
        state={schedules}
        noun="the schedules"
        empty={
          <Empty title="No schedules yet.">
            {!creating && <p>Create one to run an agent every night, every hour…</p>}
          </Empty>
        }
        card={(schedule) => (
          <ScheduleCard
            key={schedule.id}
            schedule={schedule}
            agents={agents.data?.agents ?? []}
            onChanged={() => void schedules.reload()}
          />
        )}
      />
    </>
  );
}
