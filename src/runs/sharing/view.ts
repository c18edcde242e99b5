// What a share link shows of its run: the page's words (title, prompt, state, times, outcome, who started it by
// name, what it made), by an allow-list of fields. Nothing that would reach further: no configuration (MCP servers'
// headers, secrets' names, the runner), no metadata, no IDs of other runs, conversations or artifacts (a public
// artifact's ID would download it), no e-mail addresses, no signed links.
import { type Static, Type } from 'typebox';
import { literalUnion } from '../../platform/http/literal-union.js';
import { type RunItem, SHARE_ACCESS_LEVELS, type ShareAccess } from '../schemas.js';

export const SharedArtifact = Type.Object({
  artifact_type: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  title: Type.Optional(Type.String({ description: "A plan's title, a file's name or a reference's title" })),
  url: Type.Optional(Type.String({ description: "A pull request's or external reference's own URL" })),
  branch: Type.Optional(Type.String()),
});

export const SharedRun = Type.Object(
  {
    run_id: Type.String(),
    title: Type.String(),
    state: Type.String(),
    prompt: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    started_at: Type.Optional(Type.String({ format: 'date-time' })),
    finished_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    run_time: Type.Optional(Type.String()),
    status_message: Type.Optional(
      Type.Object({ message: Type.Optional(Type.String()), error_code: Type.Optional(Type.String()) }),
    ),
    source: Type.String(),
    creator: Type.Object({ type: Type.String(), display_name: Type.Optional(Type.String()) }),
    harness: Type.Optional(Type.String()),
    model_id: Type.Optional(Type.String()),
    artifacts: Type.Array(SharedArtifact),
    public_access: literalUnion(SHARE_ACCESS_LEVELS, {
      description: 'What the link allows: VIEWER reads; EDITOR also sends follow-ups (POST /shared/run/followups)',
    }),
  },
  { description: 'A run as its share link shows it: its page, without anything that reaches beyond the run' },
);
export type SharedRun = Static<typeof SharedRun>;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function sharedArtifact(artifact: RunItem['artifacts'][number]): Static<typeof SharedArtifact> {
  const data = (artifact.data ?? {}) as Record<string, unknown>;
  const type = artifact.artifact_type;
  const title = text(data.title) ?? text(data.filename);
  // Only a pull request's and a reference's URL: they are the artifact itself, and need their own access.
  const url = type === 'PULL_REQUEST' || type === 'EXTERNAL_REFERENCE' ? text(data.url) : undefined;
  const branch = type === 'PULL_REQUEST' ? text(data.branch) : undefined;
  return {
    artifact_type: type,
    created_at: artifact.created_at,
    ...(title ? { title } : {}),
    ...(url ? { url } : {}),
    ...(branch ? { branch } : {}),
  };
}

export function sharedRun(item: RunItem, access: ShareAccess): SharedRun {
  const config = item.agent_config as Record<string, unknown>;
  const harness = text((config.harness as Record<string, unknown> | undefined)?.type);
  const model = text((config.harness as Record<string, unknown> | undefined)?.model_id) ?? text(config.model_id);
  const status = item.status_message as Record<string, unknown> | undefined;
  const message = text(status?.message);
  const errorCode = text(status?.error_code);
  const displayName = text(item.creator?.display_name);
  return {
    run_id: item.run_id,
    title: item.title,
    state: item.state,
    prompt: item.prompt,
    created_at: item.created_at,
    updated_at: item.updated_at,
    ...(item.started_at ? { started_at: item.started_at } : {}),
    finished_at: item.finished_at ?? null,
    ...(item.run_time ? { run_time: item.run_time } : {}),
    ...(message || errorCode
      ? { status_message: { ...(message ? { message } : {}), ...(errorCode ? { error_code: errorCode } : {}) } }
      : {}),
    source: item.source,
    creator: { type: item.creator?.type ?? 'user', ...(displayName ? { display_name: displayName } : {}) },
    ...(harness ? { harness } : {}),
    ...(model ? { model_id: model } : {}),
    artifacts: item.artifacts.map(sharedArtifact),
    public_access: access,
  };
}
