import { useEffect, useState } from 'react';
import { Link, Navigate, NavLink, Route, Routes, useLocation } from 'react-router';
import { PageHeader } from './components/ui';
import { useResource } from './hooks';
import { AgentsPage } from './pages/Agents';
import { AutomationsPage } from './pages/Automations';
import { EnvironmentsPage } from './pages/Environments';
import { GitHubPage } from './pages/GitHub';
import { ModelsPage } from './pages/Models';
import { NewRunPage } from './pages/NewRun';
import { OverviewPage } from './pages/Overview';
import { RunPage } from './pages/Run';
import { RunnersPage } from './pages/Runners';
import { RunsPage } from './pages/Runs';
import { SchedulesPage } from './pages/Schedules';
import { SharedRunPage } from './pages/SharedRun';
import { SignInPage } from './pages/SignIn';
import { StatusPage } from './pages/Status';
import { WebhookPage } from './pages/Webhook';
import { WebhooksPage } from './pages/Webhooks';
import { WorkersPage } from './pages/Workers';
import { useClient, useSession } from './session';

// Client-side routes. None may start with a path the server owns (/api, /webhooks, /docs, /errors, /healthz,
// /readyz, /assets): the server answers those itself (src/platform/http/dashboard.ts).
const NAV = [
  ['/', 'Overview'],
  ['/runs', 'Runs'],
  ['/schedules', 'Schedules'],
  ['/environments', 'Environments'],
  ['/agents', 'Agents'],
  ['/runners', 'Runners'],
  ['/models', 'Models'],
  ['/workers', 'Workers'],
  ['/factory/webhooks', 'Webhooks'],
  ['/factory/automations', 'Automations'],
] as const;
/** Shown to instance administrators only, as their routes answer no one else (403). */
const ADMIN_NAV = [
  ['/github', 'GitHub'],
  ['/status', 'Status'],
] as const;

/**
 * Whether the signed-in key is an instance administrator's: asked of an administrators' route that answers 403 to
 * anyone else before it reads anything (GET /admin/teams). Unknown while it loads, and false on any error.
 */
function useIsAdmin(): boolean {
  const client = useClient();
  const probe = useResource(
    (signal) => client.get('/admin/teams', undefined, signal).then(() => true),
    // Signing in again mounts the navigation anew, so one key per mount is enough.
    'admin',
  );
  return probe.data === true;
}

function MainNav() {
  const admin = useIsAdmin();
  return (
    <ul>
      {[...NAV, ...(admin ? ADMIN_NAV : [])].map(([to, label]) => (
        <li key={to}>
          <NavLink to={to} end={to === '/'}>
            {label}
          </NavLink>
        </li>
      ))}
    </ul>
  );
}

export function App() {
  const { client, signOut } = useSession();
  const [menuOpen, setMenuOpen] = useState(false);
  const location = useLocation();
  // biome-ignore lint/correctness/useExhaustiveDependencies: the menu closes whenever the page changes
  useEffect(() => setMenuOpen(false), [location.pathname]);

  // A share link's page needs no key: whoever holds the link sees that one run (pages/SharedRun.tsx).
  if (location.pathname === '/shared/run') return <SharedRunPage />;
  if (!client) return <SignInPage />;
  return (
    <div className="layout">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <Link className="brand" to="/">
          Hangar
        </Link>
        <button
          type="button"
          className="menu-button secondary"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <nav id="main-nav" aria-label="Main" className={menuOpen ? 'open' : undefined}>
          <MainNav />
          <button type="button" className="secondary sign-out" onClick={() => signOut()}>
            Sign out
          </button>
        </nav>
      </header>
      <main id="main">
        <Routes>
          <Route path="/" element={<OverviewPage />} />
          <Route path="/overview" element={<Navigate to="/" replace />} />
          <Route path="/runs" element={<RunsPage />} />
          <Route path="/runs/new" element={<NewRunPage />} />
          <Route path="/runs/:runId" element={<RunPage />} />
          <Route path="/schedules" element={<SchedulesPage />} />
          <Route path="/environments" element={<EnvironmentsPage />} />
          <Route path="/agents" element={<AgentsPage />} />
          <Route path="/runners" element={<RunnersPage />} />
          <Route path="/models" element={<ModelsPage />} />
          <Route path="/workers" element={<WorkersPage />} />
          <Route path="/factory/webhooks" element={<WebhooksPage />} />
          <Route path="/factory/webhooks/:uid" element={<WebhookPage />} />
          <Route path="/factory/automations" element={<AutomationsPage />} />
          <Route path="/github" element={<GitHubPage />} />
          <Route path="/status" element={<StatusPage />} />
          <Route path="*" element={<NotFound />} />
        </Routes>
      </main>
    </div>
  );
}

function NotFound() {
  return (
    <>
      <PageHeader title="Page not found" />
      <p>
        Nothing here. Go to the <NavLink to="/runs">runs</NavLink>.
      </p>
    </>
  );
}
