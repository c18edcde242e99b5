// What each timeline event means to the person watching a run, in one table: the CLI's `--follow` and `runs events`
// (src/runs/cli.ts) and the dashboard (web/src/words.ts) both show these words, so that neither prints raw event
// names a person has to decode. Like platform/http/api-fetch.ts, it imports nothing: Vite bundles it as it is.

const EVENT_LABELS: Record<string, string> = {
  oz_run_created: 'Run created',
  oz_run_claimed: 'Picked up',
  worker_container_ready: 'Environment ready',
  agent_started: 'Agent started',
  environment_repo_cloned: 'Repository cloned',
  environment_setup_command: 'Setup command done',
  environment_setup_step_failed: 'Setup step failed',
  agent_progress: 'Progress',
  followup_received: 'Follow-up received',
  run_continued: 'Continued with the follow-ups',
  artifact_refused: 'Artifact refused',
  oz_run_done: 'Finished',
  oz_run_failed: 'Failed',
  oz_run_errored: 'Stopped by an error',
  oz_run_blocked: 'Waiting for an answer',
  oz_run_cancelled: 'Cancelled',
  vm_shutdown: 'Environment shut down',
  debug_agent_started: 'Debug session started',
  debug_agent_finished: 'Debug session ended',
  debug_agent_failed: 'Debug session failed',
  network_refused: 'Host refused',
  network_refusals: 'Refused hosts',
  network_allow_list_unenforced: 'No network (allow list not enforceable here)',
};

/** An API name in sentence case, without the `oz_` prefix: "Run requeued" for oz_run_requeued. */
export function sentenceCase(name: string): string {
  const words = name.replace(/^oz_/, '').replace(/_/g, ' ').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** "Finished" for oz_run_done; an event without words of its own is its name in sentence case. */
export function eventLabel(eventType: string): string {
  return EVENT_LABELS[eventType] ?? EVENT_LABELS[eventType.replace(/^oz_/, '')] ?? sentenceCase(eventType);
}
