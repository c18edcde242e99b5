/**
 * The kinds of artifact a run reports. A run's detail and the runs list's filter name them, and the artifacts slice,
 * which stores and serves artifacts, builds on runs, so the list lives here and artifacts takes it from runs.
 */
export const ARTIFACT_TYPES = ['PLAN', 'PULL_REQUEST', 'SCREENSHOT', 'FILE', 'EXTERNAL_REFERENCE'] as const;
export type ArtifactType = (typeof ARTIFACT_TYPES)[number];
