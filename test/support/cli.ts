import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { HANGAR_FROM_SOURCES } from './typescript.js';

const run = promisify(execFile);

/** Runs a `hangar` CLI verb from the sources against a test server and returns its output and exit code. */
export async function hangarCli(
  args: string[],
  env: { url: string; apiKey: string; team?: string },
  input?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const child = run(process.execPath, [...HANGAR_FROM_SOURCES, ...args], {
    env: {
      ...process.env,
      HANGAR_URL: env.url,
      HANGAR_API_KEY: env.apiKey,
      ...(env.team ? { HANGAR_TEAM: env.team } : {}),
    },
  });
  if (input !== undefined) {
    child.child.stdin?.end(input);
  }
  try {
    const { stdout, stderr } = await child;
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failure = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failure.code ?? 1, stdout: failure.stdout ?? '', stderr: failure.stderr ?? '' };
  }
}
