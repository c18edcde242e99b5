import type { RunItem } from './schemas.js';

/**
 * A run's `request_usage` on the wire: what the lifecycle keeps per run (input, output and total tokens and the
 * inference cost in USD, each summed over its executions and model calls) and the structured views Oz clients read,
 * derived from those figures: the cost split by kind of token, and the usage by category and model.
 *
 * Hangar counts cached and cache-writing input as input, at the input price (egress/inference-endpoints.ts), so
 * the cache parts of the split are 0. The split follows the served model's catalogue prices (its input share is
 * input tokens times the input price over the whole), scaled to the recorded cost so that the parts add up to it.
 * All of a run's calls are its agent's (`primary_agent`); Hangar keeps no other category.
 */

/** The model that served a run and its catalogue prices, in USD per million tokens. */
export interface ServedModel {
  model_id: string;
  input: number;
  output: number;
}

/** Finds the model a run used: the one it named, else its harness's default; undefined for an unpriced one. */
export type ServedModelLookup = (modelId: string | null, harness: string | null) => ServedModel | undefined;

/** `usage_by_category` category of every call Hangar meters. */
export const PRIMARY_AGENT = 'primary_agent';

type RequestUsage = NonNullable<RunItem['request_usage']>;

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/**
 * `stored` is the run's request_usage column; `ownKey` says the run used a team's own provider key (its config names
 * an auth secret), so its inference is reported as `byok` rather than the operator's model access.
 */
export function requestUsage(
  stored: Record<string, unknown>,
  served: ServedModel | undefined,
  ownKey: boolean,
): RequestUsage {
  const usage: RequestUsage = { ...stored };
  const input = count(stored.input_tokens);
  const output = count(stored.output_tokens);
  const total =
    count(stored.total_tokens) ??
    (input !== undefined || output !== undefined ? (input ?? 0) + (output ?? 0) : undefined);
  if (total !== undefined) usage.total_tokens = total;
  const cost = count(stored.inference_cost);
  if (cost !== undefined) usage.inference_cost_usd = cost;
  if (served === undefined || cost === undefined || input === undefined || output === undefined) return usage;

  const weightIn = input * served.input;
  const weightOut = output * served.output;
  const whole = weightIn + weightOut;
  const inputCost = whole > 0 ? (cost * weightIn) / whole : 0;
  const breakdown = {
    input_cost_usd: inputCost,
    input_cache_read_cost_usd: 0,
    input_cache_write_cost_usd: 0,
    output_cost_usd: cost - inputCost,
  };
  usage.inference_cost_breakdown_usd = breakdown;
  const perModel = {
    [served.model_id]: {
      cost_usd: breakdown,
      token_count: { input, input_cache_read: 0, input_cache_write: 0, output },
      web_search_cost_usd: 0,
      web_search_count: 0,
    },
  };
  usage.usage_by_category = {
    [PRIMARY_AGENT]: {
      platform_usage_usd: 0,
      ...(ownKey ? { byok_inference_usage: perModel } : { direct_api_inference_usage: perModel }),
    },
  };
  usage.model_token_usage = [
    {
      model_id: served.model_id,
      total_tokens: input + output,
      usage_type: ownKey ? 'byok' : 'warp',
      tokens_by_category: { [PRIMARY_AGENT]: input + output },
    },
  ];
  return usage;
}
