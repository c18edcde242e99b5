import type { Command } from 'commander';
import { examples } from '../platform/cli/options.js';
import { show } from '../platform/cli/output.js';
import { table } from '../platform/cli/table.js';
import { callApi, clientOptionsFromEnv } from '../platform/http/client.js';
import type { ModelList } from './schemas.js';

const price = (dollars: number) => `$${dollars.toFixed(2)}`;

/** The catalogue as people read it: which model runs get without --model, and why one cannot be used. */
function catalogueTable(list: ModelList): string {
  const rows = table(
    list.models,
    [
      { header: 'MODEL ID', value: (model) => `${model.id}${model.id === list.default_model_id ? ' (default)' : ''}` },
      { header: 'PROVIDER', value: (model) => model.provider },
      { header: 'NAME', value: (model) => model.display_name },
      {
        header: 'COST IN / OUT (per 1M tokens)',
        value: (model) =>
          `${price(model.cost.input_per_million_tokens)} / ${price(model.cost.output_per_million_tokens)}`,
      },
      {
        header: 'USABLE',
        value: (model) =>
          model.disable_reason ? `no: ${model.disabled_reason_detail ?? model.disable_reason}` : 'yes',
      },
    ],
    'The catalogue has no models.',
  );
  const hint =
    list.default_model_id === null
      ? 'No model can be used now: set a provider key (see docs/models.md) or define a harness.\n'
      : 'Pick one with `hangar run "..." --model <MODEL ID>`.\n';
  return `${rows}${hint}`;
}

/** `hangar models`: the model catalogue (GET /agent/models). */
export function registerModelCommands(program: Command): void {
  examples(
    program
      .command('models')
      .description("the model catalogue: each model's cost, and whether it can be used now (and why not)"),
    [
      ['hangar models', 'the catalogue as a table'],
      ['hangar models --json', 'as the API answers it'],
    ],
  ).action(async () => show(await callApi<ModelList>(clientOptionsFromEnv(), 'GET', '/agent/models'), catalogueTable));
}
