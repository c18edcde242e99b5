// The test-filter action: would a payload filter (or a saved automation) start a run for a stored delivery?
import { type FormEvent, useId, useState } from 'react';
import { seg } from '../api/client';
import type { Automation, DeliveryList, TestFilterRequest, TestFilterResult, Webhook } from '../api/types';
import { useAction, useResource } from '../hooks';
import { useClient } from '../session';
import { ErrorMessage } from './ui';

export function TestFilterForm({
  webhooks,
  automations,
  webhookUid: fixedWebhook,
  deliveryId: fixedDelivery,
}: {
  webhooks?: Webhook[];
  automations: Automation[];
  webhookUid?: string;
  deliveryId?: string;
}) {
  const client = useClient();
  const [webhookUid, setWebhookUid] = useState(fixedWebhook ?? webhooks?.[0]?.uid ?? '');
  const [deliveryId, setDeliveryId] = useState(fixedDelivery ?? '');
  const [mode, setMode] = useState<'filter' | 'automation'>('filter');
  const [filter, setFilter] = useState('{\n  "action": ["opened"]\n}');
  const [automationId, setAutomationId] = useState('');
  const [result, setResult] = useState<TestFilterResult>();
  const test = useAction();
  const modeName = useId();
  const deliveries = useResource(
    async (signal) =>
      webhookUid && !fixedDelivery
        ? client.get<DeliveryList>(`/factory/webhooks/${seg(webhookUid)}/deliveries`, { limit: 50 }, signal)
        : undefined,
    `${webhookUid}|${fixedDelivery ?? ''}`,
  );
  const accepted = deliveries.data?.deliveries.filter((delivery) => delivery.status === 'Accepted') ?? [];
  const chosenDelivery = fixedDelivery ?? (deliveryId || accepted[0]?.delivery_id || '');

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setResult(undefined);
    const answer = await test.run(async () => {
      let body: TestFilterRequest;
      if (mode === 'automation') {
        body = { webhook_uid: webhookUid, delivery_id: chosenDelivery, automation_id: automationId };
      } else {
        let payload: unknown;
        try {
          payload = filter.trim() ? JSON.parse(filter) : undefined;
        } catch (error) {
          throw new Error(`the filter is not valid JSON (${error instanceof Error ? error.message : String(error)})`);
        }
        if (payload !== undefined && (payload === null || typeof payload !== 'object' || Array.isArray(payload)))
          throw new Error('the filter is not a JSON object');
        body = {
          webhook_uid: webhookUid,
          delivery_id: chosenDelivery,
          filter: {
            webhook_ids: [webhookUid],
            ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
          },
        };
      }
      return client.post<TestFilterResult>('/factory/automations/test-filter', body);
    });
    if (answer) setResult(answer);
  };

  return (
    <form className="card stack test-filter" onSubmit={submit} aria-label="Test a filter">
      {!fixedWebhook && (
        <label>
          Webhook
          <select value={webhookUid} onChange={(event) => setWebhookUid(event.target.value)} required>
            {(webhooks ?? []).map((webhook) => (
              <option key={webhook.uid} value={webhook.uid}>
                {webhook.name}
              </option>
            ))}
          </select>
        </label>
      )}
      {!fixedDelivery && (
        <label>
          Delivery
          <select value={chosenDelivery} onChange={(event) => setDeliveryId(event.target.value)} required>
            {accepted.length === 0 && <option value="">No accepted delivery yet</option>}
            {accepted.map((delivery) => (
              <option key={delivery.delivery_id} value={delivery.delivery_id}>
                {delivery.delivery_id} ({new Date(delivery.received_at).toLocaleString()})
              </option>
            ))}
          </select>
        </label>
      )}
      <fieldset className="inline">
        <legend>Test</legend>
        <label className="checkbox">
          <input type="radio" name={modeName} checked={mode === 'filter'} onChange={() => setMode('filter')} />A payload
          filter
        </label>
        <label className="checkbox">
          <input type="radio" name={modeName} checked={mode === 'automation'} onChange={() => setMode('automation')} />A
          saved automation
        </label>
      </fieldset>
      {mode === 'filter' ? (
        <label>
          Payload filter (JSON)
          <textarea
            className="code"
            rows={5}
            value={filter}
            onChange={(event) => setFilter(event.target.value)}
            spellCheck={false}
          />
        </label>
      ) : (
        <label>
          Automation
          <select value={automationId} onChange={(event) => setAutomationId(event.target.value)} required>
            <option value="">Choose one</option>
            {automations.map((automation) => (
              <option key={automation.id} value={automation.id}>
                {automation.name}
              </option>
            ))}
          </select>
        </label>
      )}
      <ErrorMessage error={deliveries.error} title="Could not load the deliveries" />
      <ErrorMessage error={test.error} title="Could not test the filter" />
      <div className="row">
        <button type="submit" disabled={test.pending || !webhookUid || !chosenDelivery}>
          Test filter
        </button>
      </div>
      {result && (
        <div className={result.would_trigger ? 'notice' : 'error'} role="status">
          <p>
            <strong>{result.would_trigger ? 'Would start a run.' : 'Would not start a run.'}</strong>
          </p>
          <ul>
            <li>
              Webhook check: {result.webhook_check.passed ? 'passed' : 'failed'} — {result.webhook_check.detail}
            </li>
            <li>
              Payload check: {result.payload_check.passed ? 'passed' : 'failed'} — {result.payload_check.detail}
            </li>
          </ul>
        </div>
      )}
    </form>
  );
}
