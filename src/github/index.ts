// The public surface of the github slice: other slices and the composition root import only this module.
export type {
  ExecutionRef,
  GitHubAccess,
  PublishRequest,
  PublishResult,
  RepoCredential,
  RepoName,
  RunGitHub,
} from './access.js';
export { GitHubRefusal } from './app-client.js';
export {
  APP_MAX_EVENT_AGE_DAYS,
  APP_REPLAY_KEY_DAYS,
  APP_REPLAY_SCOPE,
  type AppDelivery,
  registerAppWebhookRoute,
} from './app-webhook.js';
export { registerGitCredentialRoute } from './git-credential-route.js';
export { registerGitHubRoutes } from './http.js';
export { type GitHubTarget, HANGAR_MARK, revokeTokens, tokenAccess } from './publish.js';
export { type GitCredentialQuery, RunGitHubAccess } from './run-access.js';
export { GitHubService, REFUSAL_REPLIES, type RepositoryPermission } from './service.js';
export { threadReplyLoop } from './thread-replies.js';
export { type GitHubTriggerPorts, registerGitHubTriggers } from './trigger-dispatch.js';
export { countTriggerStart } from './trigger-records.js';
export {
  classify,
  GITHUB_EVENT_KINDS,
  type GitHubEventKind,
  type IssueThread,
  startsByDefault,
  teamsOfInstallation,
  threadInstructions,
  threadName,
  threadRunConfig,
} from './triggers.js';
