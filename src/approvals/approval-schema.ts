import { z } from 'zod';

export const ENFORCEMENT_LEVELS = ['hard', 'soft'] as const;

const approverSchema = z.object({ type: z.literal('user'), id: z.string().describe("The approver's user id.") });

export const approvalPolicySchema = z.object({
  id: z.string(),
  name: z.string(),
  projectId: z.string(),
  envId: z.string(),
  environment: z.object({ id: z.string(), slug: z.string(), name: z.string() }),
  secretPath: z.string().describe('The secret-path glob the policy protects.'),
  approvals: z.number().int().describe('How many approvers must approve a request before it can be merged.'),
  enforcementLevel: z
    .enum(ENFORCEMENT_LEVELS)
    .describe('`hard`: no way around; `soft`: machine identities write directly and approvers may merge early with a reason (both audited).'),
  approvers: z.array(approverSchema),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type ApprovalPolicyView = z.infer<typeof approvalPolicySchema>;

const conflictSchema = z.object({ secretKey: z.string(), op: z.enum(['create', 'update', 'delete']) });

/** A change request as the reference answers a write that became one (`{approval}`). */
export const approvalRequestSchema = z.object({
  id: z.string(),
  policyId: z.string(),
  hasMerged: z.boolean(),
  status: z.enum(['open', 'closed']),
  conflicts: z.array(conflictSchema).describe('The secrets that changed meanwhile, found by the last merge attempt.'),
  slug: z.string(),
  folderId: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  isReplicated: z.boolean(),
  committerUserId: z.string(),
  statusChangedByUserId: z.string().nullable(),
  bypassReason: z.string().nullable(),
});
export type ApprovalRequestView = z.infer<typeof approvalRequestSchema>;

const reviewerSchema = z.object({ userId: z.string(), status: z.enum(['approved', 'rejected']) });

/** A commit of a request as listed: what changes, never a value. */
const commitSummarySchema = z.object({ op: z.enum(['create', 'update', 'delete']), secretKey: z.string(), newSecretKey: z.string().nullable() });

export const listedApprovalRequestSchema = approvalRequestSchema.extend({
  environment: z.string(),
  secretPath: z.string(),
  mergedRevision: z.number().int().nullable().describe('The change-feed revision the merge committed at.'),
  policy: approvalPolicySchema.pick({ id: true, name: true, approvals: true, enforcementLevel: true, secretPath: true, approvers: true }),
  reviewers: z.array(reviewerSchema),
  commits: z.array(commitSummarySchema),
});

/** One commit of a request with its diff: the proposed fields and the secret as it is now. */
const commitSchema = commitSummarySchema.extend({
  secretValue: z.string().optional(),
  secretComment: z.string().optional(),
  skipMultilineEncoding: z.boolean().nullable(),
  secretVersion: z.number().int().nullable().describe('The version the change was proposed against (null: the key was free).'),
  secret: z
    .object({ id: z.string(), secretKey: z.string(), secretValue: z.string(), secretComment: z.string(), version: z.number().int() })
    .nullable()
    .describe('The shared secret at the key now (null when there is none).'),
});

export const detailedApprovalRequestSchema = listedApprovalRequestSchema.extend({ commits: z.array(commitSchema) });
export type DetailedApprovalRequest = z.infer<typeof detailedApprovalRequestSchema>;
export type ListedApprovalRequest = z.infer<typeof listedApprovalRequestSchema>;
