import { useEffect, useState } from 'react';
import { api, type Project, type Session } from './api.ts';
import { Access } from './Access.tsx';
import { Audit } from './Audit.tsx';
import { Compare } from './Compare.tsx';
import { ORG_PATH, OrgNav, OrgScreen } from './Organization.tsx';
import { Projects } from './Projects.tsx';
import { navigate, useLocation } from './router.ts';
import { Secrets } from './Secrets.tsx';
import { ThemeToggle } from './ThemeToggle.tsx';
import { Where } from './Where.tsx';

const PROJECT_PATH = /^\/projects\/([^/]+)(\/compare|\/audit|\/access|\/where)?$/;

export function Shell({ session, onSessionChanged, onSignedOut }: { session: Session; onSessionChanged: () => Promise<void>; onSignedOut: () => void }) {
  const url = useLocation();
  const [projects, setProjects] = useState<Project[]>();
  const [error, setError] = useState<string>();
  const match = PROJECT_PATH.exec(url.pathname);
  const orgScreen = ORG_PATH.exec(url.pathname)?.[1];
  const project = projects?.find((candidate) => candidate.id === match?.[1]);

  async function loadProjects() {
    try {
      setProjects((await api<{ workspaces: Project[] }>('GET', '/api/v1/workspace')).workspaces);
    } catch (failure) {
      setError((failure as Error).message);
    }
  }
  useEffect(() => {
    void loadProjects();
  }, [session.organizationId]);

  async function switchOrganization(organizationId: string) {
    await api('PUT', '/api/v1/console/session/organization', { body: { organizationId } });
    navigate('/');
    await onSessionChanged();
  }

  async function signOut() {
    await api('DELETE', '/api/v1/console/session').catch(() => undefined);
    navigate('/');
    onSignedOut();
  }

  return (
    <>
      <header className="top">
        <a href="/" className="brand" onClick={(event) => (event.preventDefault(), navigate('/'))}>
          Coffer
        </a>
        <label>
          Organization
          <select value={session.organizationId} onChange={(event) => void switchOrganization(event.target.value)}>
            {session.organizations.map((org) => (
              <option key={org.id} value={org.id}>
                {org.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Project
          <select value={project?.id ?? ''} onChange={(event) => navigate(event.target.value ? `/projects/${event.target.value}` : '/')}>
            <option value="">All projects</option>
            {projects?.map((candidate) => (
              <option key={candidate.id} value={candidate.id}>
                {candidate.name}
              </option>
            ))}
          </select>
        </label>
        <OrgNav current={orgScreen} />
        {project && (
          <nav aria-label="Project">
            <a
              href={`/projects/${project.id}`}
              aria-current={!match?.[2] ? 'page' : undefined}
              onClick={(event) => (event.preventDefault(), navigate(`/projects/${project.id}`))}
            >
              Secrets
            </a>
            <a
              href={`/projects/${project.id}/compare`}
              aria-current={match?.[2] === '/compare' ? 'page' : undefined}
              onClick={(event) => (event.preventDefault(), navigate(`/projects/${project.id}/compare`))}
            >
              Compare
            </a>
            <a
              href={`/projects/${project.id}/where`}
              aria-current={match?.[2] === '/where' ? 'page' : undefined}
              onClick={(event) => (event.preventDefault(), navigate(`/projects/${project.id}/where`))}
            >
              Where it goes
            </a>
            <a
              href={`/projects/${project.id}/audit`}
              aria-current={match?.[2] === '/audit' ? 'page' : undefined}
              onClick={(event) => (event.preventDefault(), navigate(`/projects/${project.id}/audit`))}
            >
              Audit log
            </a>
            <a
              href={`/projects/${project.id}/access`}
              aria-current={match?.[2] === '/access' ? 'page' : undefined}
              onClick={(event) => (event.preventDefault(), navigate(`/projects/${project.id}/access`))}
            >
              Access
            </a>
          </nav>
        )}
        <span className="spacer" />
        <span className="who">{session.user.email}</span>
        <ThemeToggle />
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <main>
        {error && <p role="alert">{error}</p>}
        {!projects && !error && <p>Loading…</p>}
        {projects && orgScreen && <OrgScreen screen={orgScreen} session={session} projects={projects} />}
        {projects && !match && !orgScreen && <Projects projects={projects} onCreated={loadProjects} />}
        {projects && match && !project && <p role="alert">This project does not exist or you may not see it.</p>}
        {project && !match?.[2] && <Secrets key={project.id} project={project} />}
        {project && match?.[2] === '/compare' && <Compare key={project.id} project={project} />}
        {project && match?.[2] === '/audit' && (
          <Audit
            key={project.id}
            source={{ title: `${project.name}: audit log`, path: `/api/v1/workspace/${project.id}/audit-logs`, fileName: `audit-${project.slug}.json` }}
          />
        )}
        {project && match?.[2] === '/access' && <Access key={project.id} project={project} />}
        {project && match?.[2] === '/where' && <Where key={project.id} project={project} />}
      </main>
    </>
  );
}
