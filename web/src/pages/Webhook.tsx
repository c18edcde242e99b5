import { useEffect, useState } from 'react';
import { Link, useNavigate, useParams, useSearchParams } from 'react-router';
import { seg } from '../api/client';
import type { Automation, Delivery, DeliveryList, Webhook } from '../api/types';
import { TestFilterForm } from '../components/TestFilter';
import {
  confirmed,
  DeleteButton,
  Empty,
  ErrorMessage,
  Flag,
  Json,
  Loading,
  PageHeader,
  SecretOnce,
  Time,
} from '../components/ui';
import { useAction, useResource } from '../hooks';
import { useClient } from '../session';
import { authLabel } from './Webhooks';

function DeliveryDetails({
  webhookUid,
  deliveryId,
  automations,
}: {
  webhookUid: string;
  deliveryId: string;
  automations: Automation[];
}) {
  const client = useClient();
  const delivery = useResource(
    (signal) =>
      client.get<Delivery>(`/factory/webhooks/${seg(webhookUid)}/deliveries/${seg(deliveryId)}`, undefined, signal),
    `${webhookUid}/${deliveryId}`,
    // Until the automations have looked at it.
    { pollMs: 3000 },
  );
  const item = delivery.data;
  const name = (id: string) => automations.find((automation) => automation.id === id)?.name ?? id;
  return (
    <section className="card" aria-labelledby="delivery-title">
      <h2 id="delivery-title">
        Delivery <code>{deliveryId}</code>
      </h2>
      <ErrorMessage error={delivery.error} title="Could not load the delivery" />
      {!item && delivery.loading && <Loading what="Loading the delivery" />}
      {item && (
        <>
          <dl className="facts">
            <dt>Status</dt>
            <dd>{item.status}</dd>
            <dt>Received</dt>
            <dd>
              <Time value={item.received_at} exact />
            </dd>
            <dt>Size</dt>
            <dd>{item.size_bytes} bytes</dd>
            {item.status === 'Accepted' && (
              <>
                <dt>Evaluated</dt>
                <dd>{item.evaluated_at ? <Time value={item.evaluated_at} /> : 'not yet'}</dd>
              </>
            )}
          </dl>
          <h3>Runs started</h3>
          {item.runs && item.runs.length > 0 ? (
            <ul>
              {item.runs.map((firing) => (
                <li key={firing.automation_id}>
                  {name(firing.automation_id)}:{' '}
                  {firing.run_id ? (
                    <Link to={`/runs/${encodeURIComponent(firing.run_id)}`}>run {firing.run_id}</Link>
                  ) : (
                    <span className="error-text">no run ({firing.error})</span>
                  )}
                </li>
              ))}
            </ul>
          ) : (
            <p className="muted">
              {item.status === 'Accepted'
                ? 'No automation matched this delivery.'
                : 'Only accepted deliveries start runs.'}
            </p>
          )}
          {item.payload !== undefined && (
            <>
              <h3>Payload</h3>
              <Json value={item.payload} label="Payload" />
            </>
          )}
          {item.status === 'Accepted' && (
            <>
              <h3>Test a filter against this delivery</h3>
              <TestFilterForm webhookUid={webhookUid} deliveryId={deliveryId} automations={automations} />
            </>
          )}
        </>
      )}
    </section>
  );
}

export function WebhookPage() {
  const client = useClient();
  const uid = useParams().uid!;
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const selected = params.get('delivery');
  const webhook = useResource((signal) => client.get<Webhook>(`/factory/webhooks/${seg(uid)}`, undefined, signal), uid);
  const automations = useResource(
    (signal) => client.get<{ automations: Automation[] }>('/factory/automations', undefined, signal),
    'automations',
  );
  const firstPage = useResource(
    (signal) => client.get<DeliveryList>(`/factory/webhooks/${seg(uid)}/deliveries`, { limit: 25 }, signal),
    uid,
    { pollMs: 10_000 },
  );
  const [older, setOlder] = useState<Delivery[]>([]);
  const [cursor, setCursor] = useState<string | null>();
  const [issued, setIssued] = useState<string>();
  const action = useAction();
  const more = useAction();

  // biome-ignore lint/correctness/useExhaustiveDependencies: older pages belong to one webhook and are dropped when another is shown
  useEffect(() => {
    setOlder([]);
    setCursor(undefined);
  }, [uid]);

  const item = webhook.data;
  if (!item) {
    return (
      <>
        <PageHeader title="Webhook" />
        {webhook.loading ? (
          <Loading what="Loading the webhook" />
        ) : (
          <ErrorMessage error={webhook.error} title="Could not load the webhook" />
        )}
        <p>
          <Link to="/factory/webhooks">Back to the webhooks</Link>
        </p>
      </>
    );
  }

  const change = async (work: () => Promise<Webhook | undefined>) => {
    const answer = await action.run(work);
    if (answer) {
      webhook.setData(() => answer);
      if (answer.secret) setIssued(answer.secret);
    }
  };
  // Newer pages replace the first one when polled; older pages were loaded with "Show older deliveries".
  const deliveries = [
    ...(firstPage.data?.deliveries ?? []),
    ...older.filter(
      (delivery) => !firstPage.data?.deliveries.some((seen) => seen.delivery_id === delivery.delivery_id),
    ),
  ];
  const nextCursor = cursor === undefined ? firstPage.data?.next_cursor : cursor;

  return (
    <>
      <PageHeader title={item.name} subtitle={<Link to="/factory/webhooks">← All webhooks</Link>}>
        <button
          type="button"
          className="secondary"
          disabled={action.pending}
          onClick={() => change(() => client.put<Webhook>(`/factory/webhooks/${seg(uid)}`, { enabled: !item.enabled }))}
        >
          {item.enabled ? 'Disable' : 'Enable'}
        </button>
        {!item.secret_name && (
          <button
            type="button"
            className="secondary"
            disabled={action.pending}
            onClick={() =>
              confirmed('Rotate the secret? The current one stops working at once.') &&
              change(() => client.post<Webhook>(`/factory/webhooks/${seg(uid)}/rotate`))
            }
          >
            Rotate secret
          </button>
        )}
        <DeleteButton
          question={`Delete the webhook "${item.name}"? Senders get 404 from now on.`}
          pending={action.pending}
          onDelete={async () => {
            if ((await action.run(() => client.delete(`/factory/webhooks/${seg(uid)}`))) !== undefined)
              navigate('/factory/webhooks');
          }}
        />
      </PageHeader>
      <ErrorMessage error={action.error} />
      {issued && <SecretOnce label="New secret" value={issued} onDismiss={() => setIssued(undefined)} />}
      <section className="card">
        <dl className="facts">
          <dt>State</dt>
          <dd>
            <Flag on={item.enabled} yes="Enabled" no="Disabled" />
          </dd>
          <dt>URL</dt>
          <dd className="break">
            <code>{item.url}</code>
          </dd>
          <dt>Authentication</dt>
          <dd>{authLabel(item)}</dd>
          {item.secret_name && (
            <>
              <dt>Team secret</dt>
              <dd>
                <code>{item.secret_name}</code>
              </dd>
            </>
          )}
          {item.delivery_id_header && (
            <>
              <dt>Delivery ID header</dt>
              <dd>
                <code>{item.delivery_id_header}</code>
              </dd>
            </>
          )}
          <dt>UID</dt>
          <dd>
            <code>{item.uid}</code>
          </dd>
          <dt>Updated</dt>
          <dd>
            <Time value={item.updated_at} />
          </dd>
        </dl>
      </section>

      <div className="run-columns">
        <section aria-labelledby="deliveries-title" className="run-side">
          <div className="item-head">
            <h2 id="deliveries-title">Delivery log</h2>
            <button
              type="button"
              className="secondary"
              onClick={() => void firstPage.reload()}
              aria-label="Refresh the delivery log"
            >
              Refresh
            </button>
          </div>
          <ErrorMessage error={firstPage.error} title="Could not load the deliveries" />
          {firstPage.loading && !firstPage.data && <Loading what="Loading deliveries" />}
          {firstPage.data && deliveries.length === 0 && (
            <Empty title="No deliveries yet.">
              <p>They show here as senders POST to the URL above.</p>
            </Empty>
          )}
          {deliveries.length > 0 && (
            <ul className="deliveries">
              {deliveries.map((delivery) => (
                <li key={delivery.delivery_id}>
                  <button
                    type="button"
                    className="link-button"
                    aria-current={delivery.delivery_id === selected ? 'true' : undefined}
                    onClick={() => setParams({ delivery: delivery.delivery_id })}
                  >
                    <code>{delivery.delivery_id}</code>
                  </button>{' '}
                  <span
                    className={`badge ${delivery.status === 'Accepted' ? 'badge-on' : delivery.status === 'Duplicate' ? '' : 'badge-off'}`}
                  >
                    {delivery.status}
                  </span>{' '}
                  <Time value={delivery.received_at} />
                </li>
              ))}
            </ul>
          )}
          <ErrorMessage error={more.error} title="Could not load older deliveries" />
          {nextCursor && (
            <button
              type="button"
              className="secondary"
              disabled={more.pending}
              onClick={async () => {
                const page = await more.run(() =>
                  client.get<DeliveryList>(`/factory/webhooks/${seg(uid)}/deliveries`, {
                    limit: 25,
                    cursor: nextCursor,
                  }),
                );
                if (!page) return;
                setOlder((current) => [...current, ...page.deliveries]);
                setCursor(page.next_cursor);
              }}
            >
              Show older deliveries
            </button>
          )}
        </section>
        <div className="run-main">
          {selected ? (
            <DeliveryDetails webhookUid={uid} deliveryId={selected} automations={automations.data?.automations ?? []} />
          ) : (
            <p className="muted">Choose a delivery to see its payload and the runs it started.</p>
          )}
        </div>
      </div>
    </>
  );
}
