// The public surface of the automations slice: other slices and the composition root import only this module.
export { AutomationEvaluator } from './evaluator.js';
export { payloadFilterProblem } from './filter.js';
export { registerAutomationRoutes } from './http.js';
export { GitHubTrigger, MAX_TRIGGERS, ScheduleTrigger, WebhookTrigger, type Trigger } from './schemas.js';
export { AutomationsService } from './service.js';
export type { AutomationValues } from './store.js';
export { busiestAutomations } from './store.js';
export { deliveryPrompt, PAYLOAD_FILE, payloadFiles } from './envelope.js';
export { githubAutomationRuns, recordGitHubFirings } from './github.js';
export { observeFirings } from './metrics.js';
