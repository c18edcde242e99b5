import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { EnvironmentForRun } from '../../environments/index.js';
import type { BuiltInSetup } from '../model/built-in-setup.js';
import { guestRunOf, guestSecretsRefusal, withholdsTeamSecrets } from './guest-run.js';

const base: EnvironmentForRun = {
  name: 'e',
  description: '',
  github_repos: [],
  setup_commands: [],
  failure_session_retention_minutes: null,
};
const guest = (secretsAllowed: boolean): EnvironmentForRun => ({
  ...base,
  guest_run: { owner_team_uid: 'owner', secrets_allowed: secretsAllowed },
});
const builtIn = (secretNames: Record<string, string>) =>
  ({ model: {}, mcpServers: { s: { secret_names: secretNames } } }) as unknown as BuiltInSetup;
const withKey = { harness_auth_secrets: { claude_auth_secret_name: 'KEY' } };

// A consent taken back while the run waited: its start is refused when it would hand over the team's secrets.
test("a run in another team's environment starts with its team's secrets only with consent", () => {
  assert.equal(guestRunOf(base), undefined);
  assert.equal(withholdsTeamSecrets(base), false);
  assert.equal(withholdsTeamSecrets(guest(true)), false);
  assert.equal(withholdsTeamSecrets(guest(false)), true);
  assert.match(guestSecretsRefusal(withKey, 'E1', guest(false), builtIn({})) ?? '', /environments\/E1\/trust/);
  assert.ok(guestSecretsRefusal({}, 'E1', guest(false), builtIn({ TICKETS_LABEL: 'B_TICKETS' })));
  assert.equal(guestSecretsRefusal({}, 'E1', guest(false), builtIn({})), undefined, 'no secret, no refusal');
  assert.equal(guestSecretsRefusal(withKey, 'E1', guest(true), builtIn({})), undefined);
  assert.equal(guestSecretsRefusal(withKey, 'E1', base, builtIn({})), undefined);
  // An operator's harness is given no team secret: nothing to refuse.
  assert.equal(guestSecretsRefusal(withKey, 'E1', guest(false), undefined), undefined);
});
