import { z } from 'zod';
import { ACTIONS, CONDITIONAL_SUBJECTS, type PermissionRule, PROJECT_SUBJECTS, type ProjectSubject } from './permission-rules.ts';

const conditionValue = z.union([
  z.string().min(1),
  z.strictObject({ $eq: z.string().min(1) }),
  z.strictObject({ $ne: z.string().min(1) }),
  z.strictObject({ $in: z.array(z.string().min(1)).min(1) }),
  z.strictObject({ $glob: z.string().min(1) }),
]);

const actionSchema = z.enum(ACTIONS);

/** A project permission rule as clients send it; `action` may be one action or a list. */
export const permissionRuleInputSchema = z
  .object({
    subject: z.enum(PROJECT_SUBJECTS),
    action: z.union([actionSchema, z.array(actionSchema).min(1)]),
    conditions: z.strictObject({ environment: conditionValue.optional(), secretPath: conditionValue.optional() }).optional(),
    inverted: z.boolean().optional(),
  })
  .refine((rule) => !rule.conditions || CONDITIONAL_SUBJECTS.includes(rule.subject as ProjectSubject), {
    message: `conditions apply only to ${CONDITIONAL_SUBJECTS.join(', ')}`,
    path: ['conditions'],
  })
  .transform((rule): PermissionRule => {
    const conditions = Object.fromEntries(Object.entries(rule.conditions ?? {}).filter(([, value]) => value !== undefined));
    return {
      subject: rule.subject,
      action: [...new Set(Array.isArray(rule.action) ? rule.action : [rule.action])],
      ...(Object.keys(conditions).length > 0 ? { conditions } : {}),
      ...(rule.inverted ? { inverted: true } : {}),
    };
  });

export const permissionRulesInputSchema = z.array(permissionRuleInputSchema);

export const permissionRuleSchema = z.object({
  subject: z.string(),
  action: z.array(z.string()),
  conditions: z.record(z.string(), z.unknown()).optional(),
  inverted: z.boolean().optional(),
});
