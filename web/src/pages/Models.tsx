import { Empty, ErrorMessage, Loading, PageHeader } from '../components/ui';
import { isNotSupported, useResource } from '../hooks';
import { useClient } from '../session';

interface Model {
  id?: string;
  model_id?: string;
  name?: string;
  display_name?: string;
  provider?: string;
  available?: boolean;
  cost?: unknown;
  [field: string]: unknown;
}

const text = (value: unknown) => (value === undefined || value === null ? '' : typeof value === 'string' ? value : JSON.stringify(value));

export function ModelsPage() {
  const client = useClient();
  const models = useResource((signal) => client.get<{ models?: Model[] }>('/agent/models', undefined, signal), 'models');
  const list = models.data?.models;
  return (
    <>
      <PageHeader title="Models" subtitle="The models runs can use, with their cost and availability." />
      {models.loading && !models.data && !models.error && <Loading what="Loading models" />}
      {isNotSupported(models.error) ? (
        <Empty title="The model catalogue is not available in this version of Hangar.">
          <p>Runs still name a model with <code>config.model_id</code>; the harness decides what it means.</p>
        </Empty>
      ) : (
        <ErrorMessage error={models.error} title="Could not load the models" />
      )}
      {list && list.length === 0 && <Empty title="No models are configured." />}
      {list && list.length > 0 && (
        <table className="responsive">
          <caption className="visually-hidden">Models</caption>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Provider</th>
              <th scope="col">Available</th>
              <th scope="col">Cost</th>
            </tr>
          </thead>
          <tbody>
            {list.map((model, index) => (
              <tr key={text(model.id ?? model.model_id ?? index)}>
                <th scope="row" data-label="Model">{text(model.display_name ?? model.name ?? model.id ?? model.model_id)}</th>
                <td data-label="Provider">{text(model.provider)}</td>
                <td data-label="Available">{model.available === false ? 'No' : 'Yes'}</td>
                <td data-label="Cost">{text(model.cost)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
