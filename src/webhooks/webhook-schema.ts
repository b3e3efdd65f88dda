import { z } from 'zod';

export const webhookSchema = z.object({
  id: z.string(),
  projectId: z.string(),
  envId: z.string(),
  environment: z.object({ id: z.string(), slug: z.string(), name: z.string() }),
  secretPath: z.string().describe('The secret-path glob whose changes are delivered.'),
  url: z.string(),
  type: z.literal('general'),
  isDisabled: z.boolean(),
  consecutiveFailures: z.number().int(),
  cursorRevision: z.number().int().describe('The newest revision delivered (or passed over as not matching).'),
  lastStatus: z.enum(['success', 'failed']).nullable(),
  lastRunErrorMessage: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type WebhookView = z.infer<typeof webhookSchema>;

export const deliverySchema = z.object({
  id: z.string(),
  revision: z.number().int(),
  attempt: z.number().int(),
  status: z.enum(['delivered', 'failed']),
  responseStatus: z.number().int().nullable(),
  error: z.string().nullable(),
  createdAt: z.string(),
});
