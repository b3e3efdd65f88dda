import type { FastifyReply } from 'fastify';

/**
 * Aborts when the client goes away before its answer was written (the
 * connection closed): a held request (a revision wait) then stops at once
 * and gives back its place, instead of running on for nobody.
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const raw = reply.raw;
  const onClose = () => {
    if (!raw.writableFinished) controller.abort();
  };
  raw.once('close', onClose);
  return controller.signal;
}
