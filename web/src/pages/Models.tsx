import type { ModelList } from '../api/types';
import { ResourceList } from '../components/ResourceList';
import { Empty, PageHeader } from '../components/ui';
import { useResource } from '../hooks';
import { useClient } from '../session';

const price = (value: number, currency: string) => `${currency === 'USD' ? '$' : `${currency} `}${value.toFixed(2)}`;

export function ModelsPage() {
  const client = useClient();
  const models = useResource((signal) => client.get<ModelList>('/agent/models', undefined, signal), 'models');
  return (
    <>
      <PageHeader
        title="Models"
        subtitle="The models runs can use, with their cost per million tokens and whether they can be used now."
      />
      <ResourceList
        items={models.data?.models}
        state={models}
        noun="the models"
        empty={<Empty title="No models are configured." />}
        caption="Models"
        rowKey={(model) => model.id}
        columns={[
          {
            label: 'Model',
            cell: (model) => (
              <>
                {model.display_name}
                {model.id === models.data?.default_model_id && <span className="badge"> default</span>}
                <div className="muted">
                  <code>{model.id}</code>
                  {model.reasoning_level ? ` · reasoning ${model.reasoning_level}` : ''}
                  {model.vision_supported ? ' · vision' : ''}
                </div>
              </>
            ),
          },
          { label: 'Provider', cell: (model) => model.provider },
          {
            label: 'Available',
            cell: (model) =>
              model.disable_reason ? (
                <span title={model.disable_reason}>No: {model.disabled_reason_detail}</span>
              ) : (
                'Yes'
              ),
          },
          { label: 'Input', cell: (model) => price(model.cost.input_per_million_tokens, model.cost.currency) },
          { label: 'Output', cell: (model) => price(model.cost.output_per_million_tokens, model.cost.currency) },
        ]}
      />
    </>
  );
}
