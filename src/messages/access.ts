import type { Caller } from '../identities/index.js';
import { authenticationRequired, notFound } from '../platform/http/errors.js';
import type { RunPlace } from '../runs/index.js';

/**
 * Who may use the messaging routes, and on which runs: a run's own task token reaches the runs of its tree (same
 * team, same root run), a member's API key the runs the member sees. Any other run, another team's, another tree's
 * or one that does not exist, is the same 404.
 */
export type Credential = { kind: 'run'; runId: string; executionId: number } | { kind: 'member'; caller: Caller };

export type Actor = { kind: 'run'; run: RunPlace } | { kind: 'member'; teamUid: string; principalUid: string };

export type PlacesOf = (ids: readonly string[]) => Promise<Map<string, RunPlace>>;

/** A task token is good only for its run's current execution: one of an ended execution acts no more. */
export async function actorOf(credential: Credential, placesOf: PlacesOf): Promise<Actor> {
  if (credential.kind === 'member')
    return { kind: 'member', teamUid: credential.caller.teamUid, principalUid: credential.caller.principal.uid };
  const run = (await placesOf([credential.runId])).get(credential.runId);
  if (!run || run.executionId !== credential.executionId)
    throw authenticationRequired("this task token is not the current execution's of its run");
  return { kind: 'run', run };
}

export function reaches(actor: Actor, place: RunPlace | undefined): place is RunPlace {
  if (!place) return false;
  if (actor.kind === 'run') return place.teamUid === actor.run.teamUid && place.rootRunId === actor.run.rootRunId;
  return place.teamUid === actor.teamUid && (place.scopeType === 'Team' || place.creatorUid === actor.principalUid);
}

/** The places of `ids`, every one reachable by `actor`, or the 404 of the first that is not. */
export async function reachable(actor: Actor, ids: readonly string[], placesOf: PlacesOf): Promise<RunPlace[]> {
  const places = await placesOf(ids);
  return ids.map((id) => {
    const place = places.get(id);
    if (!reaches(actor, place)) throw notFound(`run ${id} not found`);
    return place;
  });
}
