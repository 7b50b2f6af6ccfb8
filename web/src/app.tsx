// The shell: who is signed in, the navigation, and which page the path shows.
import { useEffect, useRef, useState } from "react";
import { api, setCsrfToken, ApiError, type SessionInfo } from "./api";
import { ErrorText, Link } from "./components";
import { AccountPage } from "./pages/account";
import { CatalogPage } from "./pages/catalog";
import { CatalogModelsPage } from "./pages/catalog-models";
import { AdminPage } from "./pages/admin";
import { AdminAccountPage } from "./pages/admin-account";
import { AdminAlertsPage } from "./pages/alerts";
import { AdminCodesPage } from "./pages/admin-codes";
import { AdminTeamsPage } from "./pages/admin-teams";
import { AdminUsagePage } from "./pages/admin-usage";
import { InvitePage } from "./pages/invite";
import { GettingStartedPage } from "./pages/getting-started";
import { KeysPage } from "./pages/keys";
import { ModelsPage } from "./pages/models";
import { RequestsPage } from "./pages/requests";
import { SetPasswordPage } from "./pages/set-password";
import { SignInPage } from "./pages/sign-in";
import { UpstreamsPage } from "./pages/upstreams";
import { UsagePage } from "./pages/usage";
import { WorkspacePage } from "./pages/workspace";
import { WorkspacesPage } from "./pages/workspaces";
import { navigate, usePath } from "./router";

/** The pages outside the navigation, by path pattern, for the document's title. */
const OTHER_TITLES: Array<[RegExp, string]> = [
  [/^\/keys\/[^/]+\/start$/, "Getting started"],
  [/^\/workspaces\/[^/]+$/, "Workspace"],
  [/^\/admin\/accounts\/[^/]+$/, "Account"],
  [/^\/account$/, "Your account"],
  [/^\/invite$/, "Invite"],
  [/^\/set-password$/, "Set your password"],
];

/** "Requests · Model Gateway": the page's name first, so a tab or a history entry says which page it is. */
function documentTitle(path: string, navLabel: string | null, signedIn: boolean | undefined): string {
  const name = signedIn === false && path !== "/set-password" ? "Sign in" : (navLabel ?? OTHER_TITLES.find(([pattern]) => pattern.test(path))?.[1] ?? null);
  return name === null ? "Model Gateway" : `${name} · Model Gateway`;
}

export function App() {
  const path = usePath();
  const [session, setSession] = useState<SessionInfo | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  // The navigation on a phone: folded into a Menu button, closed again by every page change.
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [path]);
  const navLabel = useRef<string | null>(null);
  useEffect(() => {
    document.title = documentTitle(path, navLabel.current, session === undefined ? undefined : session !== null);
  });
  // Set below once the navigation is known; null for the pages before it (signing in, a set-password link).
  navLabel.current = null;

  useEffect(() => {
    api<SessionInfo>("GET", "/session").then(
      (s) => signedIn(s),
      (err: unknown) => (err instanceof ApiError && err.status === 401 ? setSession(null) : setError(err)),
    );
  }, []);

  function signedIn(s: SessionInfo) {
    setCsrfToken(s.csrf_token);
    setSession(s);
  }

  async function signOut() {
    try {
      await api("POST", "/signout", {});
    } catch (err) {
      setError(err);
    }
    setCsrfToken(null);
    setSession(null);
    navigate("/");
  }

  // A set-password link works signed in or not: using it signs this browser in as the link's account.
  if (path === "/set-password") {
    return (
      <SetPasswordPage
        onSignedIn={(s) => {
          signedIn(s);
          // The link is used: it leaves the address bar and the history.
          navigate("/", { replace: true });
        }}
      />
    );
  }
  if (session === undefined) return error ? <ErrorText error={error} /> : <p className="loading">Loading…</p>;
  if (session === null) return <SignInPage onSignedIn={signedIn} invite={path === "/invite"} />;

  const nav: Array<[string, string]> = [
    ["/", "Keys"],
    ["/models", "Models"],
    ["/usage", "Usage"],
    ["/requests", "Requests"],
    ["/workspaces", "Workspaces"],
    ...(session.account.is_admin
      ? ([
          ["/admin", "Accounts"],
          ["/admin/teams", "Teams"],
          ["/admin/codes", "Codes"],
          ["/admin/usage", "Reports"],
          ["/admin/alerts", "Alerts"],
          ["/admin/upstreams", "Upstreams"],
          ["/admin/catalog", "Catalog"],
        ] as Array<[string, string]>)
      : []),
  ];
  // The nav item for the path: the longest one it is at or under ("/admin/upstreams" is not "Accounts").
  const under = (to: string) => path === to || (to !== "/" && path.startsWith(`${to}/`));
  const current = nav.map(([to]) => to).reduce((best: string | null, to) => (under(to) && (best === null || to.length > best.length) ? to : best), null);
  navLabel.current = nav.find(([to]) => to === current)?.[1] ?? null;
  const workspaceMatch = /^\/workspaces\/([^/]+)$/.exec(path);
  const keyStartMatch = /^\/keys\/([^/]+)\/start$/.exec(path);
  const adminAccountMatch = /^\/admin\/accounts\/([^/]+)$/.exec(path);
  let page;
  if (path === "/") page = <KeysPage />;
  else if (path === "/models") page = <ModelsPage />;
  else if (keyStartMatch) page = <GettingStartedPage id={decodeURIComponent(keyStartMatch[1]!)} />;
  else if (path === "/usage") page = <UsagePage />;
  else if (path === "/requests") page = <RequestsPage isAdmin={session.account.is_admin} />;
  else if (path === "/workspaces") page = <WorkspacesPage />;
  else if (workspaceMatch) page = <WorkspacePage id={decodeURIComponent(workspaceMatch[1]!)} me={session.account} />;
  else if (path === "/invite") page = <InvitePage />;
  else if (path === "/account") page = <AccountPage session={session} onSession={signedIn} />;
  else if (path === "/admin" && session.account.is_admin) page = <AdminPage me={session.account} />;
  else if (path === "/admin/upstreams" && session.account.is_admin) page = <UpstreamsPage />;
  else if (path === "/admin/catalog" && session.account.is_admin) page = <CatalogPage />;
  else if (path === "/admin/catalog/models" && session.account.is_admin) page = <CatalogModelsPage />;
  else if (path === "/admin/codes" && session.account.is_admin) page = <AdminCodesPage />;
  else if (path === "/admin/teams" && session.account.is_admin) page = <AdminTeamsPage />;
  else if (path === "/admin/usage" && session.account.is_admin) page = <AdminUsagePage />;
  else if (path === "/admin/alerts" && session.account.is_admin) page = <AdminAlertsPage />;
  else if (adminAccountMatch && session.account.is_admin) page = <AdminAccountPage id={decodeURIComponent(adminAccountMatch[1]!)} me={session.account} />;
  else
    page = (
      <p>
        Nothing here. <Link to="/">Back to keys</Link>
      </p>
    );

  return (
    <>
      <header className={menuOpen ? "top menu-open" : "top"}>
        <strong className="brand">Model Gateway</strong>
        <button type="button" className="menu-button" aria-expanded={menuOpen} aria-controls="main-nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <nav aria-label="Main" id="main-nav">
          {nav.map(([to, label]) => (
            <Link key={to} to={to} current={to === current}>
              {label}
            </Link>
          ))}
        </nav>
        <span className="who">
          <Link to="/account" current={path === "/account"}>
            {session.account.email}
          </Link>
          {session.account.status !== "active" && <span className="badge bad"> {session.account.status}</span>}
        </span>
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <main>
        <ErrorText error={error} />
        {page}
      </main>
    </>
  );
}
