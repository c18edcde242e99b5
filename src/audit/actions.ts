/**
 * The API routes whose successful calls are audited, by method and route (as registered under /api/v1), with the
 * action each records and the route parameter that names its target (else the created resource's uid, from the
 * answer). One table, so a reviewer sees at a glance what is audited; a test checks every route here exists.
 */
export interface AuditedRoute {
  action: string;
  /** The route parameter naming the target; absent: the `uid` (or `id`, `key_uid`, `name`) of the answer. */
  target?: string;
  /** The route parameter naming the team, for instance-wide routes acting on one (memberships, budgets). */
  team?: string;
  /** Instance-wide: recorded with no team (users, teams; instance settings are recorded at start, settings.ts). */
  instance?: boolean;
}

export const AUDITED_ROUTES: Readonly<Record<string, AuditedRoute>> = {
  // Instance administration.
  'POST /admin/teams': { action: 'team.create', instance: true },
  'POST /admin/users': { action: 'user.create', instance: true },
  'PUT /admin/teams/:teamUid/members/:userUid': { action: 'membership.set', target: 'userUid', team: 'teamUid' },
  'DELETE /admin/teams/:teamUid/members/:userUid': {
    action: 'membership.delete',
    target: 'userUid',
    team: 'teamUid',
  },
  'POST /admin/api-keys': { action: 'api_key.create', instance: true },
  'DELETE /admin/api-keys/:keyUid': { action: 'api_key.revoke', target: 'keyUid', instance: true },
  'PUT /admin/teams/:teamUid/budget': { action: 'budget.set', target: 'teamUid', team: 'teamUid' },
  'DELETE /admin/teams/:teamUid/budget': { action: 'budget.delete', target: 'teamUid', team: 'teamUid' },
  'PUT /admin/teams/:teamUid/github/installations/:installationId': {
    action: 'github.link',
    target: 'installationId',
    team: 'teamUid',
  },
  'DELETE /admin/teams/:teamUid/github/installations/:installationId': {
    action: 'github.unlink',
    target: 'installationId',
    team: 'teamUid',
  },
  'PUT /admin/teams/:teamUid/github/installations/:installationId/allowed-logins/:login': {
    action: 'github.allowed_login.set',
    target: 'login',
    team: 'teamUid',
  },
  'DELETE /admin/teams/:teamUid/github/installations/:installationId/allowed-logins/:login': {
    action: 'github.allowed_login.delete',
    target: 'login',
    team: 'teamUid',
  },
  'PUT /admin/teams/:teamUid/github/token-secret': {
    action: 'github.token_secret.set',
    target: 'teamUid',
    team: 'teamUid',
  },
  'DELETE /admin/teams/:teamUid/github/token-secret': {
    action: 'github.token_secret.delete',
    target: 'teamUid',
    team: 'teamUid',
  },
  // Agent identities.
  'POST /agent/identities': { action: 'agent.create' },
  'PUT /agent/identities/:uid': { action: 'agent.update', target: 'uid' },
  'DELETE /agent/identities/:uid': { action: 'agent.delete', target: 'uid' },
  // Secrets and their grants.
  'POST /secrets': { action: 'secret.create' },
  'PUT /secrets/:name': { action: 'secret.update', target: 'name' },
  'DELETE /secrets/:name': { action: 'secret.delete', target: 'name' },
  'POST /secrets/:name/grants': { action: 'secret.grant', target: 'name' },
  'DELETE /secrets/:name/grants/:grantee_type/:grantee_uid': { action: 'secret.revoke_grant', target: 'name' },
  // MCP servers.
  'POST /mcp-servers': { action: 'mcp_server.create' },
  'PUT /mcp-servers/:uid': { action: 'mcp_server.update', target: 'uid' },
  'DELETE /mcp-servers/:uid': { action: 'mcp_server.delete', target: 'uid' },
  'POST /mcp-servers/:uid/shares': { action: 'mcp_server.share', target: 'uid' },
  'DELETE /mcp-servers/:uid/shares/:team_uid': { action: 'mcp_server.unshare', target: 'uid' },
  'POST /runners': { action: 'runner.create' },
  'PUT /runners/:uid': { action: 'runner.update', target: 'uid' },
  'DELETE /runners/:uid': { action: 'runner.delete', target: 'uid' },
  // Environments.
  'POST /environments': { action: 'environment.create' },
  'PUT /environments/:uid': { action: 'environment.update', target: 'uid' },
  'DELETE /environments/:uid': { action: 'environment.delete', target: 'uid' },
  'POST /environments/:uid/guests': { action: 'environment.share', target: 'uid' },
  'DELETE /environments/:uid/guests/:team_uid': { action: 'environment.unshare', target: 'uid' },
  'POST /environments/:uid/share-link': { action: 'environment.share_link', target: 'uid' },
  'POST /environments/:uid/trust': { action: 'environment.allow_secrets', target: 'uid' },
  'DELETE /environments/:uid/trust': { action: 'environment.disallow_secrets', target: 'uid' },
  'POST /admin/environments/:uid/rebuild': { action: 'environment.rebuild', target: 'uid', instance: true },
  // Webhooks (enabling and disabling is an update), automations, definitions.
  'POST /factory/webhooks': { action: 'webhook.create' },
  'PUT /factory/webhooks/:uid': { action: 'webhook.update', target: 'uid' },
  'DELETE /factory/webhooks/:uid': { action: 'webhook.delete', target: 'uid' },
  'POST /factory/webhooks/:uid/rotate': { action: 'webhook.rotate', target: 'uid' },
  'POST /factory/automations': { action: 'automation.create' },
  'PUT /factory/automations/:id': { action: 'automation.update', target: 'id' },
  'DELETE /factory/automations/:id': { action: 'automation.delete', target: 'id' },
  'POST /factory/factories': { action: 'factory.create' },
  'POST /factory/definitions/apply': { action: 'factory.apply' },
  // Schedules.
  'POST /agent/schedules': { action: 'schedule.create' },
  'PUT /agent/schedules/:scheduleId': { action: 'schedule.update', target: 'scheduleId' },
  'DELETE /agent/schedules/:scheduleId': { action: 'schedule.delete', target: 'scheduleId' },
  'POST /agent/schedules/:scheduleId/pause': { action: 'schedule.pause', target: 'scheduleId' },
  'POST /agent/schedules/:scheduleId/resume': { action: 'schedule.resume', target: 'scheduleId' },
  // Worker keys.
  'POST /selfhosted/worker-keys': { action: 'worker_key.create' },
  'DELETE /selfhosted/worker-keys/:keyUid': { action: 'worker_key.revoke', target: 'keyUid' },
  // Recorded by the runs slice itself (runs/sharing/service.ts), as a run's create and a keyless call carry no route
  // entry here: run.share.create (a create with config.session_sharing, PUT /agent/runs/:runId/sharing),
  // run.share.revoke (DELETE /agent/runs/:runId/sharing) and run.followup by the actor shared_link (POST
  // /shared/run/followups with an EDITOR link).
};

/**
 * Request body fields recorded as they were sent: names, roles, switches and grantees, which say what changed.
 * Any other field is recorded by name only (`fields`), so a secret's value, a webhook's secret, an MCP server's
 * env or headers, or a prompt never reach the log.
 */
export const RECORDED_FIELDS = new Set([
  'name',
  'display_name',
  'email',
  'role',
  'is_admin',
  'enabled',
  'grantee_type',
  'grantee_uid',
  'team_uid',
  'user_uid',
  'agent_uid',
  'worker_id',
  'auth_mode',
  'signature_scheme',
  'monthly_budget_usd',
  'warn_at_percent',
]);
