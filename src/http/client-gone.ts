import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * Aborts when the client goes away before its answer was written (its
 * connection closed): a held request (a revision wait) then stops at once
 * and gives back its place, instead of running on for nobody. Watches the
 * connection itself, which a kept-alive client reuses: the watch ends with
 * the answer.
 */
export function clientGone(request: FastifyRequest, reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const socket = request.raw.socket as FastifyRequest['raw']['socket'] | undefined;
  if (!socket || typeof socket.once !== 'function') return controller.signal;
  if (socket.destroyed) {
    controller.abort();
    return controller.signal;
  }
  const onClose = () => controller.abort();
  socket.once('close', onClose);
  reply.raw.once('finish', () => socket.off('close', onClose));
  return controller.signal;
}
