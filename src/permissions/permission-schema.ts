import { z } from 'zod';
import { asPathGlob, PATH_GLOB_RULES } from '../patterns/pattern-schema.ts';
import { PATH_MAX, required } from '../validation/input.ts';
import { ACTIONS, CONDITIONAL_SUBJECTS, type PermissionRule, PROJECT_SUBJECTS } from './permission-rules.ts';

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
