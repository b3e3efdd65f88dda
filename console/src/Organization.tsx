import type { Project, Session } from './api.ts';
import { Audit } from './Audit.tsx';
import { Identities } from './Identities.tsx';
import { OrgMembers } from './OrgMembers.tsx';
import { navigate } from './router.ts';

/** The organization's own screens, at /org/<screen>. */
export const ORG_PATH = /^\/org\/(members|identities|audit)$/;
const SCREENS = [
  { path: 'members', label: 'Members' },
  { path: 'identities', label: 'Identities' },
  { path: 'audit', label: 'Organization audit' },
];

export function OrgNav({ current }: { current?: string }) {
  return (
    <nav aria-label="Organization">
      {SCREENS.map((screen) => (
        <a
          key={screen.path}
          href={`/org/${screen.path}`}
          aria-current={current === screen.path ? 'page' : undefined}
          onClick={(event) => (event.preventDefault(), navigate(`/org/${screen.path}`))}
        >
          {screen.label}
        </a>
      ))}
    </nav>
  );
}

export function OrgScreen({ screen, session, projects }: { screen: string; session: Session; projects: Project[] }) {
  if (screen === 'members') return <OrgMembers session={session} />;
  if (screen === 'identities') return <Identities session={session} />;
  const title = `${session.organizations.find((org) => org.id === session.organizationId)?.name ?? 'Organization'}: audit log`;
  return <Audit key={session.organizationId} source={{ title, path: '/api/v1/organization/audit-logs', fileName: 'audit-organization.json', projects }} />;
}
