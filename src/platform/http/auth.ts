// The API key check is platform/http/api-key.ts; who a caller is, identities/request-auth.ts. Until runs/http.ts,
// runs/output-http.ts and server.ts take these from identities/index.ts (issue 22 merge), this re-export stays;
// then the file goes, and with it platform's last import of a slice.
export { callerOf, principalOf, type Authenticator } from '../../identities/index.js';
