import { parentPort } from 'node:worker_threads';
import { createEngine, type RenderAnswer, renderTemplates } from './liquid-engine.ts';
import { type RenderReply, type RenderRequest, WORKER_READY } from './render-worker-protocol.ts';

const engine = createEngine();
parentPort!.postMessage(WORKER_READY);

parentPort!.on('message', (request: RenderRequest) => {
  void renderTemplates(engine, request.templates, request.secrets)
    .catch((): RenderAnswer => ({ ok: false, key: Object.keys(request.templates)[0] ?? '', message: 'the template failed' }))
    .then((answer) => parentPort!.postMessage({ id: request.id, answer } satisfies RenderReply));
});
