import type { FastifyRequest } from 'fastify';
import type { CommittedRevisions } from '../services/committed-revisions.ts';

/** The answer header naming the newest change-feed revision a request's writes committed (see GET /api/v1/changes/wait). */
export const REVISION_HEADER = 'Coffer-Revision';

/** Each request's tracked revisions, for the onSend hook that answers them. */
export const committedRevisionsOf = new WeakMap<FastifyRequest, CommittedRevisions>();
