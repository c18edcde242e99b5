/**
 * The git credential helper of a harness's git (written into the execution's HOME; it holds no credential itself).
 * `get` answers from the execution's own credential file (its installation tokens, scoped to the run's
 * repositories and revoked at its end) or else asks Hangar's API with the execution's task token
 * (POST /harness-support/git-credential): the team's personal access token is never written into the sandbox, and
 * it is answered only for the run's repositories, while its sandbox runs, to a run whose creator may use it.
 * `store` and `erase` do nothing: git hands every helper the credential that worked, and nothing may keep it.
 */
export const GIT_CREDENTIAL_HELPER_SCRIPT = `// Hangar's git credential helper for this execution. It holds no credential.
import fs from 'node:fs';

if (process.argv[2] !== 'get') process.exit(0);
const fields = {};
for (const line of fs.readFileSync(0, 'utf8').split('\\n')) {
  const at = line.indexOf('=');
  if (at > 0) fields[line.slice(0, at)] = line.slice(at + 1);
}
const protocol = fields.protocol ?? '';
const host = fields.host ?? '';
const path = fields.path ?? '';
const answer = (credential) => {
  process.stdout.write(\`username=\${credential.username}\\npassword=\${credential.password}\\n\`);
  process.exit(0);
};
const wanted = \`\${protocol}://\${host}/\${path.replace(/^\\/+|\\/+$/g, '').replace(/\\.git$/, '')}\`.toLowerCase();
let own = [];
try {
  own = JSON.parse(fs.readFileSync(new URL('./git-credentials.json', import.meta.url), 'utf8'));
} catch {}
for (const credential of own) if (credential.url.toLowerCase() === wanted) answer(credential);
const api = process.env.HANGAR_API_URL;
const token = process.env.HANGAR_TASK_TOKEN;
if (!api || !token) process.exit(0);
const response = await fetch(\`\${api}/harness-support/git-credential\`, {
  method: 'POST',
  headers: { authorization: \`Bearer \${token}\`, 'content-type': 'application/json' },
  body: JSON.stringify({ protocol, host, path }),
}).catch((error) => ({ ok: false, status: 0, json: async () => ({ detail: String(error) }) }));
if (response.ok) answer(await response.json());
const problem = await response.json().catch(() => ({}));
process.stderr.write(\`hangar: no credential for \${protocol}://\${host}/\${path}: \${problem.detail ?? response.status}\\n\`);
`;

/** Where the helper and the execution's own credential file live, relative to the execution's HOME. */
export const HELPER_DIRECTORY = '.hangar-git';

function shellQuoted(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * git's `credential.helper` value running the helper at `script` with a node the sandbox has: Hangar's own in a
 * container (/opt/hangar/bin/node), the server's (the host's programs under bwrap and the process sandbox), else
 * the first on PATH.
 */
export function helperCommand(script: string): string {
  const nodes = ['/opt/hangar/bin/node', process.execPath].map(shellQuoted).join(' ');
  return `!f() { for n in ${nodes} node; do if command -v "$n" >/dev/null 2>&1; then exec "$n" ${shellQuoted(script)} "$@"; fi; done; }; f`;
}
