/**
 * The fixed values of a run's `source` and `execution_location`, apart from the wire schemas (schemas.ts builds
 * them from these): the client verbs validate their options with them without loading TypeBox.
 */

export const RUN_SOURCES = [
  'LINEAR',
  'API',
  'SLACK',
  'LOCAL',
  'SCHEDULED_AGENT',
  'WEB_APP',
  'GITHUB_ACTION',
  'CLOUD_MODE',
  'CLI',
  'JIRA',
  'SELF_IMPROVEMENT',
  'GITHUB_WEBHOOK',
  'GITLAB_WEBHOOK',
  'AUTOFIX',
  'RUN_SCORER',
  'ORCHESTRATION',
  'WEBHOOK',
] as const;
export type RunSource = (typeof RUN_SOURCES)[number];

export const EXECUTION_LOCATIONS = ['LOCAL', 'REMOTE'] as const;
