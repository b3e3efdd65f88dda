import { z } from 'zod';
import { environmentSlug, id, integer, optional, path, slug, text } from '../validation/input.ts';

export const POSTGRES_CREDENTIALS = 'postgres-credentials';
export const GENERATED_SECRET = 'generated-secret';
export type RotationType = typeof POSTGRES_CREDENTIALS | typeof GENERATED_SECRET;

/** A secret key a rotation writes: the same characters a secret's key may have. */
const secretKey = () => text(255).min(1, 'must not be empty').regex(/^[A-Za-z0-9_.-]+$/, 'must be letters, digits, `_`, `.` and `-`');
const roleName = () => text(63).min(1, 'must not be empty');

export const rotateAtUtcSchema = z
  .object({ hours: integer(0, 23).describe('Hour of the day (UTC).'), minutes: integer(0, 59).describe('Minute of the hour.') })
  .describe('The time of day (UTC) a scheduled run happens at.');
export type RotateAtUtc = z.infer<typeof rotateAtUtcSchema>;

export const passwordRequirementsSchema = z
  .object({
    length: integer(12, 256).describe('How many characters (12 to 256).'),
    required: z
      .object({
        lowercase: integer(0, 256),
        uppercase: integer(0, 256),
        digits: integer(0, 256),
        symbols: integer(0, 256),
      })
      .describe('At least this many characters of each class.'),
    allowedSymbols: optional(text(64).regex(/^[^A-Za-z0-9\s'"\\]+$/, 'must be symbols (no letters, digits, spaces, quotes or backslash)')).describe(
      'The symbols a password may hold (default `-_.~!*`).',
    ),
  })
  .refine((value) => value.required.lowercase + value.required.uppercase + value.required.digits + value.required.symbols <= value.length, {
    message: 'the required characters must fit in the length',
    path: ['required'],
  });
export type PasswordRequirements = z.infer<typeof passwordRequirementsSchema>;

export const postgresParametersSchema = z.object({
  username1: roleName().describe('The first of the two roles that take turns.'),
  username2: roleName().describe('The second role: it holds the previous password while the first holds the new one, and the other way round.'),
  passwordRequirements: optional(passwordRequirementsSchema).describe('How the generated passwords look (default: 48 characters, letters, digits and symbols).'),
});
export const postgresSecretsMappingSchema = z.object({
  username: secretKey().describe('The secret key that holds the active username.'),
  password: secretKey().describe('The secret key that holds the active password.'),
});

export const GENERATED_KINDS = ['password', 'random-bytes', 'uuid', 'ed25519', 'rsa'] as const;
export type GeneratedKind = (typeof GENERATED_KINDS)[number];
export const KEY_PAIR_KINDS: readonly GeneratedKind[] = ['ed25519', 'rsa'];

export const generatedParametersSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('password'),
    length: integer(8, 1024).default(32).describe('How many characters.'),
    alphabet: optional(text(256).min(2, 'must hold at least 2 characters')).describe('The characters a password is drawn from (default: letters and digits).'),
  }),
  z.object({
    kind: z.literal('random-bytes'),
    bytes: integer(8, 1024).default(32).describe('How many random bytes.'),
    encoding: z.enum(['hex', 'base64']).default('hex').describe('How the bytes are written.'),
  }),
  z.object({ kind: z.literal('uuid') }),
  z.object({ kind: z.literal('ed25519') }),
  z.object({ kind: z.literal('rsa'), modulusLength: z.union([z.literal(2048), z.literal(3072), z.literal(4096)]).default(2048) }),
]);
export type GeneratedParameters = z.infer<typeof generatedParametersSchema>;

export const generatedSecretsMappingSchema = z
  .object({
    value: optional(secretKey()).describe('password, random-bytes and uuid: the key that holds the value.'),
    previousValue: optional(secretKey()).describe('password, random-bytes and uuid: a key that keeps the value before, so a verifier can accept both.'),
    privateKey: optional(secretKey()).describe('ed25519 and rsa: the key that holds the private key (PKCS#8 PEM).'),
    publicKey: optional(secretKey()).describe('ed25519 and rsa: the key that holds the public key (SPKI PEM).'),
    previousPublicKey: optional(secretKey()).describe('ed25519 and rsa: a key that keeps the public key before, so a verifier can accept both.'),
  })
  .describe('Which secret keys the generated secret is written to.');
export type GeneratedSecretsMapping = z.infer<typeof generatedSecretsMappingSchema>;
export type PostgresSecretsMapping = z.infer<typeof postgresSecretsMappingSchema>;

const commonCreateFields = {
  name: slug({ max: 32 }).describe("The rotation's name: unique in the project."),
  projectId: id().describe('The project whose secrets the rotation maintains.'),
  description: optional(text(256).nullable()).describe('What the rotation is for.'),
  environment: environmentSlug(),
  secretPath: path(),
  isAutoRotationEnabled: z.boolean().default(true).describe('Run on the schedule (otherwise only on demand).'),
  rotationInterval: integer(1, 365).describe('Days between scheduled runs.'),
  rotateAtUtc: rotateAtUtcSchema.default({ hours: 0, minutes: 0 }),
};
const commonUpdateFields = {
  name: optional(slug({ max: 32 })),
  description: optional(text(256).nullable()),
  isAutoRotationEnabled: optional(z.boolean()),
  rotationInterval: optional(integer(1, 365)),
  rotateAtUtc: optional(rotateAtUtcSchema),
};

export const createPostgresRotationSchema = z.object({
  ...commonCreateFields,
  connectionId: id().describe('The PostgreSQL connection (`/api/v1/app-connections/postgres`) the passwords are set through.'),
  parameters: postgresParametersSchema,
  secretsMapping: postgresSecretsMappingSchema,
});
export type CreatePostgresRotationInput = z.infer<typeof createPostgresRotationSchema>;
export const updatePostgresRotationSchema = z.object(commonUpdateFields);

export const createGeneratedRotationSchema = z.object({
  ...commonCreateFields,
  parameters: generatedParametersSchema,
  secretsMapping: generatedSecretsMappingSchema,
});
export type CreateGeneratedRotationInput = z.infer<typeof createGeneratedRotationSchema>;
export const updateGeneratedRotationSchema = z.object(commonUpdateFields);
export type UpdateRotationInput = z.infer<typeof updatePostgresRotationSchema>;

export const ROTATION_STATUSES = ['success', 'failed', 'rotating'] as const;

export const secretRotationSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  type: z.enum([POSTGRES_CREDENTIALS, GENERATED_SECRET]),
  projectId: z.string(),
  connectionId: z.string().nullable(),
  connection: z.object({ app: z.literal('postgres'), name: z.string(), id: z.string() }).nullable(),
  environment: z.object({ slug: z.string(), name: z.string(), id: z.string() }),
  folder: z.object({ id: z.string(), path: z.string() }),
  parameters: z.record(z.string(), z.unknown()),
  secretsMapping: z.record(z.string(), z.string()),
  isAutoRotationEnabled: z.boolean(),
  rotationInterval: z.number(),
  rotateAtUtc: rotateAtUtcSchema,
  activeIndex: z.number(),
  rotationStatus: z.enum(ROTATION_STATUSES),
  lastRotationMessage: z.string().nullable().describe('Why the last run failed: a fixed sentence, never a value.'),
  lastRotationAttemptedAt: z.string().nullable(),
  lastRotatedAt: z.string().nullable(),
  nextRotationAt: z.string().nullable(),
  isLastRotationManual: z.boolean(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type SecretRotationResponse = z.infer<typeof secretRotationSchema>;

export const postgresGeneratedCredentialsSchema = z.array(z.object({ username: z.string(), password: z.string() }));
export const generatedValueCredentialsSchema = z.array(z.record(z.string(), z.string()));
