/** The only variables a sandboxed process inherits from the server: nothing that could carry a credential. */
const INHERITED = ['PATH', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TERM'];
const DEFAULT_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * The complete environment of a sandboxed process: a short allowlist from the server's own environment (never its
 * database URL, HANGAR_* settings or cloud credentials), HOME and TMPDIR, then the run's variables, which win.
 */
export function scrubbedEnvironment(runVariables: Record<string, string>, home: string): Record<string, string> {
  const environment: Record<string, string> = { PATH: DEFAULT_PATH };
  for (const name of INHERITED) {
    const value = process.env[name];
    if (value !== undefined && value !== '') environment[name] = value;
  }
  return { ...environment, HOME: home, TMPDIR: '/tmp', ...runVariables };
}
