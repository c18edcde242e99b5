import { type Static, Type } from 'typebox';

/** Wire schemas of the artifacts slice: artifacts, the harness-support calls and the external-reference lookup. */

import { ARTIFACT_TYPES } from '../runs/index.js';

export { ARTIFACT_TYPES, type ArtifactType } from '../runs/index.js';
/** Artifacts whose bytes are uploaded (`/harness-support/upload-artifact`) rather than described. */
export const UPLOADED_TYPES = ['FILE', 'SCREENSHOT'] as const;

export const MAX_URL_LENGTH = 2048;
/** Plan text kept per plan artifact. */
export const MAX_PLAN_BYTES = 1024 * 1024;

const Visibility = Type.Optional(
  Type.Union([Type.Literal('private'), Type.Literal('public')], {
    description: '`public` artifacts can be read and downloaded by anyone who has their id; default `private`.',
  }),
);
const HttpUrl = Type.String({ minLength: 1, maxLength: MAX_URL_LENGTH, description: 'An http(s) address' });

export const PlanData = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 500 }),
    content: Type.String({
      maxLength: MAX_PLAN_BYTES,
      description: 'The plan text (Markdown unless `content_type` says otherwise)',
    }),
    content_type: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
export const PullRequestData = Type.Object(
  { url: HttpUrl, branch: Type.Optional(Type.String({ maxLength: 256 })) },
  { additionalProperties: false },
);
export const ExternalReferenceData = Type.Object(
  {
    reference_type: Type.String({
      minLength: 1,
      maxLength: 256,
      description: 'What the address is, e.g. `linear_issue`',
    }),
    url: HttpUrl,
    title: Type.Optional(Type.String({ maxLength: 500 })),
    metadata: Type.Optional(
      Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 256 }), { maxProperties: 20 }),
    ),
  },
  { additionalProperties: false },
);

export const ReportArtifactBody = Type.Object(
  {
    artifact_type: Type.Enum(ARTIFACT_TYPES),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description:
        'PLAN `{title, content, content_type?}`; PULL_REQUEST `{url, branch?}`; EXTERNAL_REFERENCE `{reference_type, url, title?, metadata?}`. FILE and SCREENSHOT are uploaded instead.',
    }),
    visibility: Visibility,
  },
  { additionalProperties: false },
);
export type ReportArtifactBody = Static<typeof ReportArtifactBody>;

export const UploadArtifactQuery = Type.Object(
  {
    artifact_type: Type.Enum(UPLOADED_TYPES),
    filename: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Required for FILE' })),
    filepath: Type.Optional(Type.String({ maxLength: 1024, description: 'Where the file was in the workspace' })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
    visibility: Visibility,
  },
  { additionalProperties: false },
);
export type UploadArtifactQuery = Static<typeof UploadArtifactQuery>;

export const ArtifactResponse = Type.Object({
  artifact_uid: Type.String({ format: 'uuid' }),
  artifact_type: Type.Enum(ARTIFACT_TYPES),
  created_at: Type.String({ format: 'date-time' }),
  data: Type.Record(Type.String(), Type.Unknown(), {
    description:
      'The data of the type; FILE and SCREENSHOT add `download_url`, `expires_at` and `content_type`, PLAN adds `content` and `content_type`.',
  }),
});
export type ArtifactResponse = Static<typeof ArtifactResponse>;

export const ArtifactParams = Type.Object({ artifactUid: Type.String({ minLength: 1, maxLength: 64 }) });

export const RunByExternalReferenceQuery = Type.Object({
  url: Type.String({
    minLength: 1,
    maxLength: MAX_URL_LENGTH,
    description: 'A pull request or ticket address a run reported',
  }),
});
export const RunByExternalReferenceResponse = Type.Object({ run_id: Type.String() });

export const ProgressBody = Type.Object(
  {
    message: Type.String({ minLength: 1, maxLength: 2000 }),
    percent: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
  },
  { additionalProperties: false },
);
export type ProgressBody = Static<typeof ProgressBody>;
