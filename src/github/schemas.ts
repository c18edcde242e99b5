import { type Static, Type } from 'typebox';

export const TeamParams = Type.Object({ teamUid: Type.String({ minLength: 1, maxLength: 64 }) });
export const InstallationParams = Type.Object({
  teamUid: Type.String({ minLength: 1, maxLength: 64 }),
  installationId: Type.Integer({ minimum: 1, description: "The GitHub App installation's ID" }),
});

export const AllowedLoginParams = Type.Object({
  teamUid: Type.String({ minLength: 1, maxLength: 64 }),
  installationId: Type.Integer({ minimum: 1, description: "The GitHub App installation's ID" }),
  login: Type.String({ minLength: 1, maxLength: 45, description: 'A GitHub login' }),
});

export const AllowedLoginBody = Type.Object(
  {
    user_uid: Type.String({
      minLength: 1,
      maxLength: 64,
      description: "The team member the login's runs are created as (their secret grants are what the runs may use)",
    }),
  },
  { additionalProperties: false },
);
export type AllowedLoginBody = Static<typeof AllowedLoginBody>;

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
      service_user_uid: Type.Optional(
        Type.String({
          description:
            "The installation's service identity: the creator of runs started by GitHub users with write access whom the allow-list maps to no one (no grants of its own)",
        }),
      ),
      allowed_logins: Type.Optional(
        Type.Array(
          Type.Object({
            login: Type.String({ description: 'A GitHub login (lower-cased)' }),
            user_uid: Type.String({ description: "The team member the login's runs are created as" }),
            created_at: Type.String({ format: 'date-time' }),
          }),
          {
            description:
              "GitHub logins that start runs from the installation's repositories without write access, as the Hangar user given",
          },
        ),
      ),
      created_at: Type.String({ format: 'date-time' }),
    }),
  ),
});
