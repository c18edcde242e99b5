/**
 * When the runs a caller can see last used an environment or a skill, as the listings show it. The runs slice
 * answers (its RunActivity) and builds on this slice, so the question is declared here.
 */

export interface EnvironmentActivity {
  lastCreated: Date;
  lastStarted: Date | null;
}

/** Whose runs count: the team's, plus the caller's own personal runs in that team. */
export interface RunViewer {
  teamUid: string;
  principalUid: string;
}

export interface RunActivityLookup {
  byEnvironment(who: RunViewer, environmentUids: string[]): Promise<Map<string, EnvironmentActivity>>;
  /** Latest creation time of a run per skill spec, for the specs given. */
  bySkillSpec(who: RunViewer, specs: string[]): Promise<Map<string, Date>>;
}
