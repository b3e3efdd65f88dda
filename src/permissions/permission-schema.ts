import { z } from 'zod';
import { asPathGlob, PATH_GLOB_RULES } from '../patterns/pattern-schema.ts';
import { PATH_MAX, required } from '../validation/input.ts';
import { ACTIONS, type Action, CONDITIONAL_SUBJECTS, type PermissionRule, PROJECT_SUBJECTS, type ProjectSubject } from './permission-rules.ts';

/** An environment slug or a secret path (glob). */
const conditionText = () => required(PATH_MAX);

const conditionValue = z.union([
  conditionText().describe('Exactly this value.'),
  z.strictObject({ $eq: conditionText().describe('Exactly this value.') }),
  z.strictObject({ $ne: conditionText().describe('Anything but this value.') }),
  z.strictObject({ $in: z.array(conditionText()).min(1).describe('One of these values.') }),
  z.strictObject({ $glob: asPathGlob(conditionText()).describe(`A glob such as \`/app/**\` (for \`secretPath\`). ${PATH_GLOB_RULES}`) }),
]);

const actionSchema = z.enum(ACTIONS);

/** A project permission rule as clients send it; `action` may be one action or a list. */
export const permissionRuleInputSchema = z
  .object({
    subject: z.enum(PROJECT_SUBJECTS).describe('What the rule is about.'),
    action: z.union([actionSchema, z.array(actionSchema).min(1)]).describe('`read`, `create`, `edit`, `delete`, or a list of them.'),
    conditions: z
      .strictObject({
        environment: conditionValue.optional().describe('The environment slugs the rule applies to.'),
        secretPath: conditionValue.optional().describe('The secret paths the rule applies to.'),
      })
      .optional()
      .describe(`Narrows the rule to environments and paths (only for ${CONDITIONAL_SUBJECTS.join(', ')}).`),
    inverted: z.boolean().optional().describe('`true`: the rule forbids instead of allowing.'),
  })
  .describe('One permission rule (CASL).')
  .refine((rule) => !rule.conditions || CONDITIONAL_SUBJECTS.includes(rule.subject), {
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

export const permissionRulesInputSchema = z.array(permissionRuleInputSchema).describe('The rules.');

export const permissionRuleSchema = z.object({
  subject: z.string(),
  action: z.array(z.string()),
  conditions: z.record(z.string(), z.unknown()).optional(),
  inverted: z.boolean().optional(),
});

export const effectivePermissionsSchema = z
  .object({
    permissions: z
      .array(
        z.object({
          subject: z.enum(PROJECT_SUBJECTS).describe('What the caller may act on.'),
          actions: z
            .array(actionSchema)
            .describe('What it may do there, somewhere in the project (`rules` tells where, for subjects narrowed to environments and paths).'),
        }),
      )
      .describe('Each subject the caller may take an action on, with those actions; a subject it may do nothing with is left out.'),
    rules: z.array(permissionRuleSchema).describe('The rules those come from: its roles and additional privileges that are active now, as stored.'),
  })
  .meta({
    examples: [
      {
        permissions: [
          { subject: 'workspace', actions: ['read'] },
          { subject: 'secrets', actions: ['read'] },
          { subject: 'integrations', actions: ['read', 'create', 'edit', 'delete'] },
        ],
        rules: [
          { subject: 'workspace', action: ['read'] },
          { subject: 'secrets', action: ['read'], conditions: { environment: 'prod', secretPath: { $glob: '/app/**' } } },
          { subject: 'integrations', action: ['read', 'create', 'edit', 'delete'] },
        ],
      },
    ],
  });
export type EffectivePermissions = z.infer<typeof effectivePermissionsSchema>;

/** What a permission set allows, by subject, and the rules it was built from. */
export function toEffectivePermissions(set: { can(action: Action, subject: ProjectSubject): boolean; rules: readonly PermissionRule[] }): EffectivePermissions {
  const permissions = PROJECT_SUBJECTS.map((subject) => ({ subject, actions: ACTIONS.filter((action) => set.can(action, subject)) }));
  return { permissions: permissions.filter((permission) => permission.actions.length > 0), rules: [...set.rules] };
}
