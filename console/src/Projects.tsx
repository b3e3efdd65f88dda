import { field } from './form-field.ts';
import { type FormEvent, useState } from 'react';
import { api, type Project } from './api.ts';
import { navigate } from './router.ts';

export function Projects({ projects, onCreated }: { projects: Project[]; onCreated: () => Promise<void> }) {
  const [error, setError] = useState<string>();

  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const projectName = field(new FormData(form), 'projectName').trim();
    try {
      const { project } = await api<{ project: Project }>('POST', '/api/v2/workspace', { body: { projectName } });
      form.reset();
      await onCreated();
      navigate(`/projects/${project.id}`);
    } catch (failure) {
      setError((failure as Error).message);
    }
  }

  return (
    <section aria-labelledby="projects-title">
      <h1 id="projects-title">Projects</h1>
      {projects.length === 0 ? (
        <p className="empty">No projects yet. Create one below: it starts with the environments dev, staging and prod.</p>
      ) : (
        <ul className="cards">
          {projects.map((project) => (
            <li key={project.id}>
              <a href={`/projects/${project.id}`} onClick={(event) => (event.preventDefault(), navigate(`/projects/${project.id}`))}>
                {project.name}
              </a>
              <span className="muted"> {project.environments.map((environment) => environment.slug).join(' · ')}</span>
            </li>
          ))}
        </ul>
      )}
      <form onSubmit={create} className="inline">
        <label>
          New project name
          <input name="projectName" required maxLength={64} />
        </label>
        <button type="submit">Create project</button>
      </form>
      {error && <p role="alert">{error}</p>}
    </section>
  );
}
