import type { Actor } from '../actor/actor.ts';
import { ForbiddenError } from '../errors.ts';

/**
 * What a user session may reach beyond its own organization. A session signed in with the account's own password
 * (`email`) acts for the account: its sessions in every organization, its second factor, a switch to another of its
 * organizations. A session opened through an organization's single sign-on is only that organization's word for
 * an e-mail address, and any organization's admin chooses its own identity provider: it acts in that organization
 * only, or an admin could sign in as a user of another organization and reach it.
 */
export function actsForAccount(actor: Pick<Actor, 'kind' | 'authMethod'>): boolean {
  return actor.kind === 'user' && actor.authMethod === 'email';
}

/** The account of a password session; 403 for a session opened through single sign-on (actsForAccount). */
export function accountUserOf(actor: Pick<Actor, 'kind' | 'authMethod' | 'id'>): string {
  if (!actsForAccount(actor)) {
    throw new ForbiddenError(
      "This session was opened through an organization's single sign-on and acts in that organization only: sign in with your password (or through the other organization's own sign-in) for this",
      'AccountSignInRequired',
    );
  }
  return actor.id;
}
