// What the runs slice asks of other slices. Each is an interface here so that runs never imports them: the
// composition root hands the implementations to RunsService.
import type { Kysely } from 'kysely';
import type { DB } from '../database.js';

/** What run creation needs to know about agent identities (the identities slice provides it). */
export interface AgentDirectory {
  findForRun(
    db: Kysely<DB>,
    teamUid: string,
    uid: string,
  ): Promise<
    | {
        uid: string;
        name: string;
        available: boolean;
        worker_host: string | null;
        /** The factory definition that manages the agent, if one does. */
        factory_uid?: string | null;
        /** Its API key may create runs on behalf of a member of the team. */
        on_behalf_of_enabled?: boolean;
        /** The runner of its runs that name none. */
        default_runner_uid?: string | null;
        /** Whose GitHub identity its runs' tokens stand for when a run's config names none. */
        credential_strategy?: 'CREATOR' | 'EXECUTOR' | null;
      }
    | undefined
  >;
}

/** Runners a team's runs execute with (the runners slice provides it). */
export interface RunnerDirectory {
  /** The runner as a run of `teamUid` records it; undefined for one the team does not have (another team's too). */
  forRun(db: Kysely<DB>, teamUid: string, uid: string): Promise<{ name: string } | undefined>;
  /** The default runner of an environment the team reaches, in the team that owns the environment. */
  environmentDefault(
    db: Kysely<DB>,
    teamUid: string,
    environmentId: string,
  ): Promise<{ teamUid: string; runnerUid: string } | undefined>;
}

/** Which shared MCP servers a team may use in its runs (the MCP slice provides it). */
export interface McpServerDirectory {
  /**
   * The team secrets a run of `teamUid` hands over by using the server: those it refers to when the team owns it,
   * none for a server another team shares (that team's admins chose to share its secrets); null when the team may
   * not use it.
   */
  secretsForRun(db: Kysely<DB>, teamUid: string, uid: string): Promise<string[] | null>;
}

/** Whose rights to team secrets a run has: its team, its creator, its agent identity and its environment. */
export interface SecretUser {
  teamUid: string;
  creatorUid: string;
  agentUid: string | null;
  environmentId: string | null;
}

/** Which team secrets a run may use (the secrets slice provides it). */
export interface SecretAccess {
  /** The names among `names` a run acting as `user` may not use. */
  unusableSecrets(db: Kysely<DB>, user: SecretUser, names: string[]): Promise<string[]>;
}

/** Skills a team's runs may use (the environments slice provides it). */
export interface SkillResolver {
  resolveSkill(
    teamUid: string,
    spec: string,
    db: Kysely<DB>,
  ): Promise<{ id: string; name: string; description: string; base_prompt: string; full_path: string } | null>;
}

/** Environments a team may run in (the environments slice provides it). */
export interface EnvironmentDirectory {
  isAccessible(teamUid: string, uid: string, db: Kysely<DB>): Promise<boolean>;
  /** The team secrets a run in the environment uses without naming them (its image's registry credentials). */
  secretsForRun(teamUid: string, uid: string, db: Kysely<DB>): Promise<string[]>;
  /**
   * Those of them the run's own code can read (the team's GitHub token, which its git is given), so that whoever
   * steers it with a follow-up needs them too; registry credentials go to the container engine only.
   */
  sandboxSecretsForRun(teamUid: string, uid: string, db: Kysely<DB>): Promise<string[]>;
}
