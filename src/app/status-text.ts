import type { InstanceStatus } from './status.js';

/** The status as a person reads it: the summary, then one line per check (✓, ! or ✗) when there are checks. */
export function formatStatus(
  status: {
    summary: InstanceStatus['summary'];
    checks?: InstanceStatus['checks'];
  },
  checksHeading = 'Checks:',
): string {
  const { summary } = status;
  const lines = [
    `  dashboard:  ${summary.dashboard_url}`,
    `  sandbox:    ${summary.sandbox} (${summary.reason})`,
    `  harnesses:  runs that name none use ${summary.default_harness}`,
    ...summary.harnesses.map((harness) => `              ${harness}`),
    `  models:     ${summary.models.length > 0 ? summary.models.join(', ') : 'none has a key'}`,
    `  config:     ${summary.config_file ?? 'none (HANGAR_CONFIG unset)'}`,
    `  data:       ${summary.data_dir}`,
    `  workspaces: ${summary.workspaces}`,
    `  database:   ${summary.database}`,
  ];
  if (status.checks) {
    lines.push('', checksHeading);
    // ✓ passes, ! passes but is worth a look (a warning), ✗ fails.
    for (const check of status.checks)
      lines.push(`  ${!check.ok ? '✗' : check.warning ? '!' : '✓'} ${check.name}: ${check.detail}`);
  }
  return `${lines.join('\n')}\n`;
}
