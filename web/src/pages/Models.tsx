import type { ModelList } from '../api/types';
import { Empty, ErrorMessage, Loading, PageHeader } from '../components/ui';
import { useResource } from '../hooks';
import { useClient } from '../session';

const price = (value: number, currency: string) => `${currency === 'USD' ? '$' : `${currency} `}${value.toFixed(2)}`;

export function ModelsPage() {
  const client = useClient();
  const models = useResource((signal) => client.get<ModelList>('/agent/models', undefined, signal), 'models');
  const list = models.data?.models;
  return (
    <>
      <PageHeader
        title="Models"
        subtitle="The models runs can use, with their cost per million tokens and whether they can be used now."
      />
      {models.loading && !models.data && !models.error && <Loading what="Loading models" />}
      <ErrorMessage error={models.error} title="Could not load the models" />
      {list && list.length === 0 && <Empty title="No models are configured." />}
      {list && list.length > 0 && (
        <table className="responsive">
          <caption className="visually-hidden">Models</caption>
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Provider</th>
              <th scope="col">Available</th>
              <th scope="col">Input</th>
              <th scope="col">Output</th>
            </tr>
          </thead>
          <tbody>
            {list.map((model) => (
              <tr key={model.id}>
                <th scope="row" data-label="Model">
                  {model.display_name}
                  {model.id === models.data?.default_model_id && <span className="badge"> default</span>}
                  <div className="muted">
                    <code>{model.id}</code>
                    {model.reasoning_level ? ` · reasoning ${model.reasoning_level}` : ''}
                    {model.vision_supported ? ' · vision' : ''}
                  </div>
                </th>
                <td data-label="Provider">{model.provider}</td>
                <td data-label="Available">
                  {model.disable_reason ? (
                    <span title={model.disable_reason}>No: {model.disabled_reason_detail}</span>
                  ) : (
                    'Yes'
                  )}
                </td>
                <td data-label="Input">{price(model.cost.input_per_million_tokens, model.cost.currency)}</td>
                <td data-label="Output">{price(model.cost.output_per_million_tokens, model.cost.currency)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
