import type { RenderAnswer } from './liquid-engine.ts';

/** What the worker (render-worker.ts) posts once it has loaded the engine and takes renders. */
export const WORKER_READY = 'ready';

/** A render request from the renderer (template-renderer.ts), answered with the same id. */
export interface RenderRequest {
  id: number;
  templates: Record<string, string>;
  secrets: Record<string, string>;
}

export interface RenderReply {
  id: number;
  answer: RenderAnswer;
}
