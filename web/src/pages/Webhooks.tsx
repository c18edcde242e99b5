import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { seg } from '../api/client';
import { SIGNATURE_SCHEMES, type Webhook } from '../api/types';
import { ResourceList } from '../components/ResourceList';
import { Empty, ErrorMessage, Flag, FormActions, PageHeader, SecretOnce, Time } from '../components/ui';
import { useAction, useResource } from '../hooks';
import { useClient } from '../session';

const AUTH_MODES = [
  ['token', 'Bearer token'],
  ['url_token', 'Token in the URL'],
  ['signature', "The provider's signature"],
] as const;

export const authLabel = (webhook: Webhook) =>
  webhook.auth_mode === 'signature'
    ? `signature (${webhook.signature_scheme})`
    : (AUTH_MODES.find(([mode]) => mode === webhook.auth_mode)?.[1] ?? webhook.auth_mode);

function WebhookForm({ onCreated, onCancel }: { onCreated(webhook: Webhook): void; onCancel(): void }) {
  const client = useClient();
  const save = useAction();
  const [authMode, setAuthMode] = useState('token');
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const text = (name: string) => String(form.get(name) ?? '').trim();
    const body = {
      name: text('name'),
      auth_mode: authMode,
      ...(authMode === 'signature' ? { signature_scheme: text('signature_scheme') } : {}),
      ...(text('secret') ? { secret: text('secret') } : {}),
      ...(text('secret_name') ? { secret_name: text('secret_name') } : {}),
      ...(text('delivery_id_header') ? { delivery_id_header: text('delivery_id_header') } : {}),
    };
    const created = await save.run(() => client.post<Webhook>('/factory/webhooks', body));
    if (created) onCreated(created);
  };
  return (
    <form className="card stack" onSubmit={submit} aria-label="New webhook">
      <label>
        Name
        <input name="name" required maxLength={100} />
      </label>
      <label>
        Authentication
        <select name="auth_mode" value={authMode} onChange={(event) => setAuthMode(event.target.value)}>
          {AUTH_MODES.map(([mode, label]) => (
            <option key={mode} value={mode}>
              {label}
            </option>
          ))}
        </select>
      </label>
      {authMode === 'signature' && (
        <>
          <label>
            Signature scheme
            <select name="signature_scheme" defaultValue="github">
              {SIGNATURE_SCHEMES.map((scheme) => (
                <option key={scheme}>{scheme}</option>
              ))}
            </select>
          </label>
          <label>
            Signing secret{' '}
            <span className="muted">(required for Stripe, Sentry, PagerDuty and Vercel; generated otherwise)</span>
            <input name="secret" type="password" autoComplete="off" minLength={8} />
          </label>
        </>
      )}
      <label>
        Team secret holding the credential <span className="muted">(optional, instead of a generated one)</span>
        <input name="secret_name" />
      </label>
      <label>
        Delivery ID header <span className="muted">(optional)</span>
        <input name="delivery_id_header" placeholder="X-Request-Id" />
      </label>
      <ErrorMessage error={save.error} title="Could not create the webhook" />
      <FormActions submit="Create webhook" pending={save.pending} onCancel={onCancel} />
    </form>
  );
}

export function WebhooksPage() {
  const client = useClient();
  const webhooks = useResource(
    (signal) => client.get<{ webhooks: Webhook[] }>('/factory/webhooks', undefined, signal),
    'webhooks',
  );
  const toggle = useAction();
  const [creating, setCreating] = useState(false);
  const [issued, setIssued] = useState<Webhook>();

  return (
    <>
      <PageHeader
        title="Webhooks"
        subtitle="Addresses that external systems POST events to; automations turn them into runs."
      >
        {!creating && (
          <button type="button" onClick={() => setCreating(true)}>
            New webhook
          </button>
        )}
      </PageHeader>
      {creating && (
        <WebhookForm
          onCancel={() => setCreating(false)}
          onCreated={(webhook) => {
            setCreating(false);
            setIssued(webhook);
            void webhooks.reload();
          }}
        />
      )}
      {issued && (
        <>
          <p className="notice" role="status">
            Webhook “{issued.name}” created. Senders POST to <code>{issued.url}</code>.
          </p>
          {issued.secret && (
            <SecretOnce
              label={`Secret of ${issued.name}`}
              value={issued.secret}
              onDismiss={() => setIssued(undefined)}
            />
          )}
        </>
      )}
      <ErrorMessage error={toggle.error} title="Could not change the webhook" />
      <ResourceList
        items={webhooks.data?.webhooks}
        state={webhooks}
        noun="the webhooks"
        empty={
          <Empty title="No webhooks yet.">
            <p>
              Create one, then an <Link to="/factory/automations">automation</Link> that starts a run when a delivery
              matches.
            </p>
          </Empty>
        }
        caption="Webhooks"
        rowKey={(webhook) => webhook.uid}
        columns={[
          {
            label: 'Name',
            cell: (webhook) => <Link to={`/factory/webhooks/${encodeURIComponent(webhook.uid)}`}>{webhook.name}</Link>,
          },
          { label: 'State', cell: (webhook) => <Flag on={webhook.enabled} yes="Enabled" no="Disabled" /> },
          { label: 'Authentication', cell: authLabel },
          { label: 'URL', className: 'break', cell: (webhook) => <code>{webhook.url}</code> },
          { label: 'Created', cell: (webhook) => <Time value={webhook.created_at} /> },
          {
            label: 'Actions',
            labelHidden: true,
            cell: (webhook) => (
              <button
                type="button"
                className="secondary"
                disabled={toggle.pending}
                aria-label={`${webhook.enabled ? 'Disable' : 'Enable'} ${webhook.name}`}
                onClick={async () => {
                  if (
                    (await toggle.run(() =>
                      client.put(`/factory/webhooks/${seg(webhook.uid)}`, { enabled: !webhook.enabled }),
                    )) !== undefined
                  )
                    void webhooks.reload();
                }}
              >
                {webhook.enabled ? 'Disable' : 'Enable'}
              </button>
            ),
          },
        ]}
      />
    </>
  );
}
