import { randomUUID } from 'node:crypto';
import { newUid } from '../../src/platform/crypto.js';
import type { TestServer } from './server.js';

/** Creates a run through the API and returns its id (fails the test on anything but 200). */
export async function createRun(
  hangar: TestServer,
  body: Record<string, unknown> = {},
  apiKey?: string,
): Promise<string> {
  const response = await hangar.request('POST', '/agent/runs', { body: { prompt: 'do the thing', ...body }, apiKey });
  if (response.status !== 200) throw new Error(`create failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.run_id as string;
}

/**
 * Moves a run's columns directly in the database: nothing executes runs yet, so states and sources other than
 * a fresh API run can only be reached this way.
 */
export async function setRunColumns(hangar: TestServer, runId: string, values: Record<string, unknown>): Promise<void> {
  await hangar.db
    .updateTable('runs')
    .set(values as never)
    .where('id', '=', runId)
    .execute();
}

export async function addArtifact(
  hangar: TestServer,
  runId: string,
  artifactType: string,
  teamUid = hangar.teamUid,
): Promise<void> {
  await hangar.db
    .insertInto('artifacts')
    .values({
      uid: randomUUID(),
      run_id: runId,
      team_uid: teamUid,
      artifact_type: artifactType,
      data: JSON.stringify({ url: 'https://example.com/pr/1', branch: 'fix' }),
    })
    .execute();
}

export async function addEnvironment(hangar: TestServer, teamUid = hangar.teamUid): Promise<string> {
  const uid = newUid();
  await hangar.db
    .insertInto('environments')
    .values({ uid, team_uid: teamUid, config: JSON.stringify({ name: 'env' }) })
    .execute();
  return uid;
}

export async function addAgentIdentity(hangar: TestServer, teamUid = hangar.teamUid): Promise<string> {
  const uid = newUid();
  // Names are unique in a team: the first is "Release bot", later ones are numbered.
  const { count } = await hangar.db
    .selectFrom('agent_identities')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('team_uid', '=', teamUid)
    .where('name', 'like', 'Release bot%')
    .executeTakeFirstOrThrow();
  const name = Number(count) === 0 ? 'Release bot' : `Release bot ${Number(count) + 1}`;
  await hangar.db.insertInto('agent_identities').values({ uid, team_uid: teamUid, name }).execute();
  return uid;
}

/** Creates an environment through the API whose repositories are `repos` (owner/repo); returns its uid. */
export async function addEnvironmentWithRepos(hangar: TestServer, repos: string[], apiKey?: string): Promise<string> {
  const response = await hangar.request('POST', '/api/v1/environments', {
    apiKey,
    body: {
      name: `env ${repos.join(' ')}`,
      github_repos: repos.map((spec) => ({ owner: spec.split('/')[0], repo: spec.split('/')[1] })),
    },
  });
  if (response.status !== 201)
    throw new Error(`environment create failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.uid as string;
}

/**
 * What the run helpers (createRun, waitForState, ...) need of a server this process did not start (spawnServer's):
 * its API, with a key. The other fields of a TestServer are not there.
 */
export function spawnedServerClient(url: string, apiKey: string): TestServer {
  return {
    url,
    apiUrl: `${url}/api/v1`,
    apiKey,
    async request(method: string, urlPath: string, options: { body?: unknown } = {}) {
      const response = await fetch(`${url}${urlPath.startsWith('/api/') ? urlPath : `/api/v1${urlPath}`}`, {
        method,
        headers: {
          authorization: `Bearer ${apiKey}`,
          ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
    },
  } as unknown as TestServer;
}
