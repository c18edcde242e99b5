import { type Static, Type } from 'typebox';

export const TeamParams = Type.Object({ teamUid: Type.String({ minLength: 1, maxLength: 64 }) });
export const InstallationParams = Type.Object({
  teamUid: Type.String({ minLength: 1, maxLength: 64 }),
  installationId: Type.Integer({ minimum: 1, description: "The GitHub App installation's ID" }),
});

export const TokenSecretBody = Type.Object(
  {
    secret_name: Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        'A team secret holding a fine-grained personal access token (contents, pull requests, issues: write)',
    }),
  },
  { additionalProperties: false },
);
export type TokenSecretBody = Static<typeof TokenSecretBody>;

export const GitHubLinks = Type.Object({
  links: Type.Array(
    Type.Object({
      installation_id: Type.Optional(Type.Integer()),
      account: Type.Optional(
        Type.String({ description: "The installation's organization or user: the owner it covers" }),
      ),
      token_secret: Type.Optional(Type.String({ description: 'The team secret holding a personal access token' })),
      created_at: Type.String({ format: 'date-time' }),
    }),
  ),
});
