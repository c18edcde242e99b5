import { Link } from 'react-router';
import type { Run } from '../api/types';
import { Time } from './ui';

/** A dollar figure to the hundredth of a cent: a run's calls often cost less than a cent. */
const usd = (value: number) => `${value.toFixed(4)} USD`;

/**
 * The run page's facts about where a run came from and what it used (issue 52): when it finished, what triggered
 * it, its automation and the root of its tree, its error's category, whether a debug agent may start, and its
 * usage split by kind of token. `dt`/`dd` pairs for the page's fact list.
 */
export function RunOriginFacts({ item }: { item: Run }) {
  const usage = item.request_usage;
  const split = usage?.inference_cost_breakdown_usd;
  const status = item.status_message;
  return (
    <>
      {item.finished_at && (
        <>
          <dt>Finished</dt>
          <dd>
            <Time value={item.finished_at} />
          </dd>
        </>
      )}
      {item.trigger_url && (
        <>
          <dt>Trigger</dt>
          <dd>
            <a href={item.trigger_url}>{item.trigger_url}</a>
          </dd>
        </>
      )}
      {item.automation_id && (
        <>
          <dt>Automation</dt>
          <dd>
            <Link to={`/runs?automation_id=${encodeURIComponent(item.automation_id)}`}>{item.automation_id}</Link>
          </dd>
        </>
      )}
      {item.root_run_id !== item.run_id && (
        <>
          <dt>Root run</dt>
          <dd>
            <Link to={`/runs/${encodeURIComponent(item.root_run_id)}`}>{item.root_run_id}</Link>
          </dd>
        </>
      )}
      {item.error_category && (
        <>
          <dt>Error</dt>
          <dd title={item.error_category === 'user' ? 'Something to fix on your side' : "Hangar's own failure"}>
            <code>{status?.error_code}</code> ({item.error_category} error)
          </dd>
        </>
      )}
      {item.debug_agent_available && (
        <>
          <dt>Debug agent</dt>
          <dd>
            {status?.debug_agent_active
              ? 'Working now in the kept workspace'
              : 'A follow-up starts one in the kept workspace'}
          </dd>
        </>
      )}
      {usage?.total_tokens !== undefined && (
        <>
          <dt>Usage</dt>
          <dd>
            {usage.total_tokens.toLocaleString('en')} tokens
            {usage.inference_cost_usd !== undefined && `, ${usd(usage.inference_cost_usd)}`}
            {split && ` (input ${usd(split.input_cost_usd)}, output ${usd(split.output_cost_usd)})`}
          </dd>
        </>
      )}
    </>
  );
}
