import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { seg } from '../api/client';
import type { AgentIdentity, Automation, Webhook } from '../api/types';
import { ResourceList } from '../components/ResourceList';
import { TestFilterForm } from '../components/TestFilter';
import { DeleteButton, Empty, ErrorMessage, Flag, FormActions, Json, PageHeader, Time } from '../components/ui';
import { useAction, useResource } from '../hooks';
import { useClient } from '../session';

/** The GitHub App's events a trigger can name (src/automations/schemas.ts, GitHubTrigger). */
const GITHUB_EVENTS = [
  ['mention', "A comment mentions the App's handle"],
  ['label', 'An issue got a label'],
  ['review', 'A pull request review requested changes'],
] as const;

function AutomationForm({
  webhooks,
  agents,
  onSaved,
  onCancel,
}: {
  webhooks: Webhook[];
  agents: AgentIdentity[];
  onSaved(): void;
  onCancel(): void;
}) {
  const client = useClient();
  const save = useAction();
  const [kind, setKind] = useState<'webhook' | 'schedule' | 'github'>(webhooks.length > 0 ? 'webhook' : 'schedule');

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    await save.run(async () => {
      let trigger: Record<string, unknown>;
      const filterText = String(form.get('payload') ?? '').trim();
      let payload: unknown;
      try {
        payload = filterText ? JSON.parse(filterText) : undefined;
      } catch (error) {
        throw new Error(
          `the payload filter is not valid JSON (${error instanceof Error ? error.message : String(error)})`,
        );
      }
      if (kind === 'webhook') {
        const ids = form.getAll('webhook_ids').map(String);
        if (ids.length === 0) throw new Error('choose at least one webhook');
        trigger = {
          provider: 'webhook',
          event: 'received',
          filter: { webhook_ids: ids, ...(payload === undefined ? {} : { payload }) },
        };
      } else if (kind === 'github') {
        // Deliveries of the GitHub App to the team's linked installations (issue 30; docs/github.md).
        trigger = {
          provider: 'github',
          event: String(form.get('github_event')),
          ...(payload === undefined ? {} : { filter: { payload } }),
        };
      } else {
        trigger = { provider: 'schedule', event: 'cron_fired', schedule: { cron: String(form.get('cron')).trim() } };
      }
      const agentUid = String(form.get('agent_uid') ?? '');
      await client.post('/factory/automations', {
        name: String(form.get('name')).trim(),
        prompt: String(form.get('prompt')),
        enabled: form.get('enabled') === 'on',
        triggers: [trigger],
        ...(agentUid ? { agent_uid: agentUid } : {}),
      });
      onSaved();
    });
  };

  return (
    <form className="card stack" onSubmit={submit} aria-label="New automation">
      <label>
        Name
        <input name="name" required maxLength={100} />
      </label>
      <label>
        Prompt
        <textarea name="prompt" rows={4} required />
      </label>
      <fieldset className="inline">
        <legend>Trigger</legend>
        <label className="checkbox">
          <input type="radio" name="kind" checked={kind === 'webhook'} onChange={() => setKind('webhook')} />A webhook
          delivery
        </label>
        <label className="checkbox">
          <input type="radio" name="kind" checked={kind === 'schedule'} onChange={() => setKind('schedule')} />A cron
          schedule
        </label>
        <label className="checkbox">
          <input type="radio" name="kind" checked={kind === 'github'} onChange={() => setKind('github')} />A GitHub
          event
        </label>
      </fieldset>
      {kind === 'github' && (
        <label>
          GitHub event
          <select name="github_event" defaultValue="mention">
            {GITHUB_EVENTS.map(([event, label]) => (
              <option key={event} value={event}>
                {label}
              </option>
            ))}
          </select>
        </label>
      )}
      {kind === 'schedule' ? (
        <label>
          Cron schedule (UTC)
          <input name="cron" required placeholder="0 3 * * *" />
        </label>
      ) : (
        <>
          {kind === 'webhook' && (
            <fieldset>
              <legend>Webhooks</legend>
              {webhooks.length === 0 && (
                <p className="muted">
                  No webhooks yet: <Link to="/factory/webhooks">create one</Link> first.
                </p>
              )}
              {webhooks.map((webhook) => (
                <label key={webhook.uid} className="checkbox">
                  <input type="checkbox" name="webhook_ids" value={webhook.uid} />
                  {webhook.name}
                </label>
              ))}
            </fieldset>
          )}
          <label>
            Payload filter (JSON, optional: every delivery otherwise)
            <textarea
              name="payload"
              className="code"
              rows={4}
              placeholder='{"action": ["opened"]}'
              spellCheck={false}
            />
          </label>
        </>
      )}
      <label>
        Agent identity
        <select name="agent_uid" defaultValue="">
          <option value="">None</option>
          {agents.map((agent) => (
            <option key={agent.uid} value={agent.uid}>
              {agent.name}
            </option>
          ))}
        </select>
      </label>
      <label className="checkbox">
        <input type="checkbox" name="enabled" defaultChecked />
        Enabled
      </label>
      <ErrorMessage error={save.error} title="Could not create the automation" />
      <FormActions submit="Create automation" pending={save.pending} onCancel={onCancel} />
    </form>
  );
}

function AutomationCard({ automation, onChanged }: { automation: Automation; onChanged(): void }) {
  const client = useClient();
  const action = useAction();
  const act = async (work: () => Promise<unknown>) => {
    if ((await action.run(work)) !== undefined) onChanged();
  };
  const filters = automation.triggers
    .filter((trigger) => trigger.provider === 'webhook' || trigger.provider === 'github')
    .map((trigger) => (trigger.filter as { payload?: unknown } | undefined)?.payload)
    .filter((payload) => payload !== undefined);
  const githubEvents = automation.triggers
    .filter((trigger) => trigger.provider === 'github')
    .map((trigger) => String(trigger.event));
  return (
    <li className="card item">
      <div className="item-head">
        <h2>{automation.name}</h2>
        <Flag on={automation.enabled} yes="Enabled" no="Disabled" />
      </div>
      <p className="prompt-preview">{automation.prompt}</p>
      <dl className="facts">
        {automation.webhooks.length > 0 && (
          <>
            <dt>Webhooks</dt>
            <dd>
              {automation.webhooks.map((webhook, index) => (
                <span key={webhook.uid}>
                  {index > 0 && ', '}
                  {webhook.state === 'deleted' ? (
                    <span className="muted">
                      deleted webhook <code>{webhook.uid}</code>
                    </span>
                  ) : (
                    <Link to={`/factory/webhooks/${encodeURIComponent(webhook.uid)}`}>
                      {webhook.name ?? webhook.uid}
                    </Link>
                  )}
                  {webhook.state === 'disabled' && ' (disabled)'}
                </span>
              ))}
            </dd>
          </>
        )}
        {githubEvents.length > 0 && (
          <>
            <dt>GitHub events</dt>
            <dd>{githubEvents.join(', ')}</dd>
          </>
        )}
        {automation.schedule && (
          <>
            <dt>Next run</dt>
            <dd>
              <Time value={automation.schedule.next_run} />
            </dd>
            <dt>Last ran</dt>
            <dd>
              <Time value={automation.schedule.last_ran} />
            </dd>
          </>
        )}
      </dl>
      {filters.length > 0 && (
        <details>
          <summary>Payload filter</summary>
          {filters.map((filter, index) => (
            <Json key={index} value={filter} />
          ))}
        </details>
      )}
      {automation.schedule?.last_spawn_error && (
        <p className="error">The last tick could not start a run: {automation.schedule.last_spawn_error}</p>
      )}
      <ErrorMessage error={action.error} />
      <div className="row">
        <button
          type="button"
          className="secondary"
          disabled={action.pending}
          aria-label={`${automation.enabled ? 'Disable' : 'Enable'} ${automation.name}`}
          onClick={() =>
            act(() => client.put(`/factory/automations/${seg(automation.id)}`, { enabled: !automation.enabled }))
          }
        >
          {automation.enabled ? 'Disable' : 'Enable'}
        </button>
        <DeleteButton
          what={automation.name}
          question={`Delete the automation "${automation.name}"? Runs it started stay.`}
          pending={action.pending}
          onDelete={() => act(() => client.delete(`/factory/automations/${seg(automation.id)}`))}
        />
      </div>
    </li>
  );
}

export function AutomationsPage() {
  const client = useClient();
  const automations = useResource(
    (signal) => client.get<{ automations: Automation[] }>('/factory/automations', undefined, signal),
    'automations',
  );
  const webhooks = useResource(
    (signal) => client.get<{ webhooks: Webhook[] }>('/factory/webhooks', undefined, signal),
    'webhooks',
  );
  const agents = useResource(
    (signal) => client.get<{ agents: AgentIdentity[] }>('/agent/identities', undefined, signal),
    'agents',
  );
  const [creating, setCreating] = useState(false);
  const list = automations.data?.automations;
  const hooks = webhooks.data?.webhooks ?? [];

  return (
    <>
      <PageHeader
        title="Automations"
        subtitle="Runs started by webhook deliveries or GitHub events whose payload matches a filter, or on a cron schedule."
      >
        {!creating && (
          <button type="button" onClick={() => setCreating(true)}>
            New automation
          </button>
        )}
      </PageHeader>
      {creating && (
        <AutomationForm
          webhooks={hooks}
          agents={agents.data?.agents ?? []}
          onCancel={() => setCreating(false)}
          onSaved={() => {
            setCreating(false);
            void automations.reload();
          }}
        />
      )}
      <ErrorMessage error={webhooks.error} title="Could not load the webhooks" />
      <ResourceList
        items={list}
        state={automations}
        noun="the automations"
        empty={<Empty title="No automations yet." />}
        card={(automation) => (
          <AutomationCard key={automation.id} automation={automation} onChanged={() => void automations.reload()} />
        )}
      />
      <section aria-labelledby="test-filter-title">
        <h2 id="test-filter-title">Test a filter</h2>
        <p className="muted">
          Would a payload filter, or a saved automation, start a run for a delivery a webhook received?
        </p>
        {webhooks.data && hooks.length === 0 ? (
          <p className="muted">No webhooks yet.</p>
        ) : (
          webhooks.data && <TestFilterForm webhooks={hooks} automations={list ?? []} />
        )}
      </section>
    </>
  );
}
