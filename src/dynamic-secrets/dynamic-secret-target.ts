import { runStatements } from '../app-connections/postgres-server.ts';
import type { PostgresInputs } from './dynamic-secret-schema.ts';

/**
 * Runs a filled-in template on the dynamic secret's database with its admin credentials (app-connections'
 * postgres-server.ts: a refusal is a PostgresServerError holding a fixed sentence, never the driver's text). The
 * statements come from the project admin's template with only generated values substituted (dynamic-secret-template.ts).
 */
export function runOnTarget(inputs: PostgresInputs, statements: string): Promise<void> {
  const credentials = {
    host: inputs.host,
    port: inputs.port,
    database: inputs.database,
    username: inputs.username,
    password: inputs.password,
    sslEnabled: inputs.ca !== undefined,
    sslRejectUnauthorized: true,
    sslCertificate: inputs.ca,
  };
  return runStatements(credentials, statements);
}
