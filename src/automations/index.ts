// The public surface of the automations slice: other slices and the composition root import only this module.

export { deliveryPrompt, PAYLOAD_FILE, payloadFiles } from './envelope.js';
export { AutomationEvaluator } from './evaluator.js';
export { payloadFilterProblem } from './filter.js';
export { githubAutomationRuns, recordGitHubFirings } from './github.js';
export { registerAutomationRoutes } from './http.js';
export { observeFirings } from './metrics.js';
export { GitHubTrigger, MAX_TRIGGERS, ScheduleTrigger, type Trigger, WebhookTrigger } from './schemas.js';
export { AutomationsService } from './service.js';
export type { AutomationValues } from './store.js';
export { busiestAutomations } from './store.js';
