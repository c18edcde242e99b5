// A team's GitHub links (issue 30), for instance administrators: they decide which team acts for which GitHub
// App installation, and which team secret holds a personal access token. The admin API under
// /admin/teams/{teamUid}/github (src/github/http.ts) answers 403 to anyone else, which the page says.
import { type FormEvent, useState } from 'react';
import { ApiProblem, seg } from '../api/client';
import type { GitHubLinks, Team } from '../api/types';
import { ResourceList } from '../components/ResourceList';
import { confirmed, Empty, ErrorMessage, Loading, PageHeader, Time } from '../components/ui';
import { useAction, useResource } from '../hooks';
import { useClient } from '../session';

type GitHubLink = GitHubLinks['links'][number];

/** A link in words: the installation, or the secret holding the token. */
const linkName = (link: GitHubLink) =>
  link.installation_id ? `installation ${link.installation_id}` : `token secret ${link.token_secret}`;

function TeamLinks({ team }: { team: Team }) {
  const client = useClient();
  const base = `/admin/teams/${seg(team.uid)}/github`;
  const links = useResource((signal) => client.get<GitHubLinks>(base, undefined, signal), `github:${team.uid}`);
  const change = useAction();
  const list = links.data?.links;
  const tokenSecret = list?.find((link) => link.token_secret)?.token_secret;
  // Each change answers with the team's links as they now are: shown at once, no second request.
  const apply = async (work: () => Promise<GitHubLinks>) => {
    const answer = await change.run(work);
    if (answer) links.setData(() => answer);
    return answer !== undefined;
  };
  const link = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const id = String(new FormData(form).get('installation_id') ?? '').trim();
    if (await apply(() => client.put<GitHubLinks>(`${base}/installations/${seg(id)}`, undefined))) form.reset();
  };
  const setSecret = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const secretName = String(new FormData(form).get('secret_name') ?? '').trim();
    if (await apply(() => client.put<GitHubLinks>(`${base}/token-secret`, { secret_name: secretName }))) form.reset();
  };
  // DELETE answers with the links too, but the client's delete() reads no body: the list is loaded again.
  const remove = async (path: string) => {
    if ((await change.run(() => client.delete(path))) !== undefined) await links.reload();
  };

  return (
    <section className="stack" aria-label={`GitHub links of ${team.name}`}>
      <ErrorMessage error={change.error} title="Could not change the team's GitHub links" />
      <ResourceList
        items={list}
        state={links}
        noun="the team's GitHub links"
        empty={
          <Empty title="This team has no GitHub link.">
            <p>Link a GitHub App installation, or name a team secret holding a personal access token.</p>
          </Empty>
        }
        caption="GitHub links"
        rowKey={linkName}
        columns={[
          {
            label: 'Link',
            cell: (entry) =>
              entry.installation_id ? (
                <>Installation {entry.installation_id}</>
              ) : (
                <>
                  Token secret <code>{entry.token_secret}</code>
                </>
              ),
          },
          {
            label: 'Covers',
            cell: (entry) => entry.account ?? <span className="muted">repositories no installation covers</span>,
          },
          { label: 'Linked', cell: (entry) => <Time value={entry.created_at} /> },
          {
            label: 'Actions',
            labelHidden: true,
            cell: (entry) => (
              <button
                type="button"
                className="danger"
                disabled={change.pending}
                aria-label={`Unlink ${linkName(entry)}`}
                onClick={() => {
                  if (confirmed(`Unlink ${linkName(entry)} from ${team.name}?`))
                    void remove(
                      entry.installation_id ? `${base}/installations/${entry.installation_id}` : `${base}/token-secret`,
                    );
                }}
              >
                Unlink
              </button>
            ),
          },
        ]}
      />
      <form className="card stack" onSubmit={link} aria-label="Link an installation">
        <label>
          Installation ID <span className="muted">(GitHub asks whose it is)</span>
          <input name="installation_id" required inputMode="numeric" pattern="[0-9]+" />
        </label>
        <div className="actions">
          <button type="submit" disabled={change.pending}>
            Link installation
          </button>
        </div>
      </form>
      <form className="card stack" onSubmit={setSecret} aria-label="Use a personal access token">
        <label>
          Team secret holding a personal access token{' '}
          <span className="muted">
            (for repositories no installation covers{tokenSecret ? '; replaces the one set' : ''})
          </span>
          <input name="secret_name" required maxLength={200} />
        </label>
        <div className="actions">
          <button type="submit" disabled={change.pending}>
            Use token secret
          </button>
        </div>
      </form>
    </section>
  );
}

export function GitHubPage() {
  const client = useClient();
  const teams = useResource((signal) => client.get<{ teams: Team[] }>('/admin/teams', undefined, signal), 'teams');
  const [chosen, setChosen] = useState<string>();
  const forbidden = teams.error instanceof ApiProblem && teams.error.status === 403;
  const list = teams.data?.teams;
  const team = list?.find((each) => each.uid === chosen) ?? list?.[0];
  return (
    <>
      <PageHeader
        title="GitHub"
        subtitle="Which GitHub App installations and personal access token each team acts with."
      />
      {forbidden ? (
        <p className="notice">Only an instance administrator can link a team to GitHub.</p>
      ) : (
        <ErrorMessage error={teams.error} title="Could not load the teams" />
      )}
      {teams.loading && !list && <Loading what="Loading the teams" />}
      {list && list.length > 0 && team && (
        <>
          <label>
            Team
            <select value={team.uid} onChange={(event) => setChosen(event.target.value)}>
              {list.map((each) => (
                <option key={each.uid} value={each.uid}>
                  {each.name}
                </option>
              ))}
            </select>
          </label>
          <TeamLinks key={team.uid} team={team} />
        </>
      )}
    </>
  );
}
