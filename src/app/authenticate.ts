import type { Config } from '../config.js';
import type { Authenticator } from '../identities/index.js';
import { ApiKeyAuthenticator, AuthFailureThrottle, selectTeam } from '../identities/index.js';
import type { Database } from '../platform/db/connect.js';
import { ApiError } from '../platform/http/errors.js';

/** API keys, with wrong keys counted per client: a client that guesses too often is refused for a while. */
export function authenticator(
  db: Database['db'],
  config: Config,
  // Shared with the lookups that answer without a key (the shared-link redirects): one budget per address.
  throttle = new AuthFailureThrottle(db, config.authFailuresPerMinute),
): Authenticator {
  const apiKeys = new ApiKeyAuthenticator(db, config.planMaxAgents);
  return {
    principal: async (authorization, client) => {
      // A request without a key is not a guess; a wrong or malformed key is.
      if (authorization === undefined) return apiKeys.principal(authorization);
      throttle.refuseIfBlocked(client);
      try {
        return await apiKeys.principal(authorization);
      } catch (error) {
        if (error instanceof ApiError && error.status === 401) await throttle.failed(client);
        throw error;
      }
    },
    team: selectTeam,
  };
}
