import { z } from 'zod';

export const publicUserSchema = z.object({
  id: z.string(),
  email: z.string(),
  username: z.string(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

export const orgMembershipSchema = z.object({
  id: z.string(),
  role: z.string(),
  status: z.string(),
  inviteEmail: z.string().nullable(),
  orgId: z.string(),
  userId: z.string().nullable(),
  roleId: z.string().nullable(),
  isActive: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
  user: z.object({
    id: z.string(),
    username: z.string(),
    email: z.string(),
    isEmailVerified: z.boolean(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    publicKey: z.string().nullable(),
  }),
});
