import { z } from 'zod';
import { environmentSlug, id, integer, optional, path, slug, text } from '../validation/input.ts';

export const POSTGRES_CREDENTIALS = 'postgres-credentials';
export const GENERATED_SECRET = 'generated-secret';
export type RotationType = typeof POSTGRES_CREDENTIALS | typeof GENERATED_SECRET;

/** A secret key a rotation writes: the same characters a secret's key may have. */
const secretKey = () =>
  text(255)
    .min(1, 'must not be empty')
    .regex(/^[A-Za-z0-9_.-]+$/, 'must be letters, digits, `_`, `.` and `-`');
const roleName = () =>
  text(63)
    .min(1, 'must not be empty')
    .meta({ examples: ['orders_app_a'] });

export const rotateAtUtcSchema = z
  .object({
    hours: integer(0, 23)
      .meta({ examples: [3] })
      .describe('Hour of the day (UTC).'),
    minutes: integer(0, 59)
      .meta({ examples: [30] })
      .describe('Minute of the hour.'),
  })
  .describe('The time of day (UTC) a scheduled run happens at.');
export type RotateAtUtc = z.infer<typeof rotateAtUtcSchema>;

export const passwordRequirementsSchema = z
  .object({
    length: integer(12, 256)
      .meta({ examples: [48] })
      .describe('How many characters (12 to 256).'),
    required: z
      .object({
        lowercase: integer(0, 256)
          .meta({ examples: [1] })
          .describe('Lowercase letters, at least.'),
        uppercase: integer(0, 256)
          .meta({ examples: [1] })
          .describe('Uppercase letters, at least.'),
        digits: integer(0, 256)
          .meta({ examples: [1] })
          .describe('Digits, at least.'),
        symbols: integer(0, 256)
          .meta({ examples: [0] })
          .describe('Symbols, at least.'),
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
  username2: roleName()
    .meta({ examples: ['orders_app_b'] })
    .describe('The second role: it holds the previous password while the first holds the new one, and the other way round.'),
  passwordRequirements: optional(passwordRequirementsSchema).describe('How the generated passwords look (default: 48 characters, letters, digits and symbols).'),
});
export const postgresSecretsMappingSchema = z.object({
  username: secretKey()
    .meta({ examples: ['DB_USER'] })
    .describe('The secret key that holds the active username.'),
  password: secretKey()
    .meta({ examples: ['DB_PASSWORD'] })
    .describe('The secret key that holds the active password.'),
});

export const GENERATED_KINDS = ['password', 'random-bytes', 'uuid', 'ed25519', 'rsa'] as const;
export type GeneratedKind = (typeof GENERATED_KINDS)[number];
export const KEY_PAIR_KINDS: readonly GeneratedKind[] = ['ed25519', 'rsa'];

export const generatedParametersSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('password').describe('A password drawn from an alphabet.'),
    length: integer(8, 1024).default(32).describe('How many characters.'),
    alphabet: optional(text(256).min(2, 'must hold at least 2 characters')).describe('The characters a password is drawn from (default: letters and digits).'),
  }),
  z.object({
    kind: z.literal('random-bytes').describe('Random bytes, written as hex or base64.'),
    bytes: integer(8, 1024).default(32).describe('How many random bytes.'),
    encoding: z.enum(['hex', 'base64']).default('hex').describe('How the bytes are written.'),
  }),
  z.object({ kind: z.literal('uuid').describe('A random (version 4) UUID.') }),
  z.object({ kind: z.literal('ed25519').describe('An Ed25519 key pair, PEM.') }),
  z.object({
    kind: z.literal('rsa').describe('An RSA key pair, PEM.'),
    modulusLength: z.number().int().min(2048).max(4096).multipleOf(1024).default(2048).describe('Bits of the modulus: 2048, 3072 or 4096.'),
  }),
]);
export type GeneratedParameters = z.infer<typeof generatedParametersSchema>;

export const generatedSecretsMappingSchema = z
  .object({
    value: optional(secretKey().meta({ examples: ['API_TOKEN'] })).describe('password, random-bytes and uuid: the key that holds the value.'),
    previousValue: optional(secretKey()).describe('password, random-bytes and uuid: a key that keeps the value before, so a verifier can accept both.'),
    privateKey: optional(secretKey()).describe('ed25519 and rsa: the key that holds the private key (PKCS#8 PEM).'),
    publicKey: optional(secretKey()).describe('ed25519 and rsa: the key that holds the public key (SPKI PEM).'),
    previousPublicKey: optional(secretKey()).describe('ed25519 and rsa: a key that keeps the public key before, so a verifier can accept both.'),
  })
  .describe('Which secret keys the generated secret is written to.');
export type GeneratedSecretsMapping = z.infer<typeof generatedSecretsMappingSchema>;
export type PostgresSecretsMapping = z.infer<typeof postgresSecretsMappingSchema>;

const rotationName = () => slug({ max: 32 }).meta({ examples: ['orders-db-credentials'] });
const commonCreateFields = {
  name: rotationName().describe("The rotation's name: unique in the project."),
  projectId: id().describe('The project whose secrets the rotation maintains.'),
  description: optional(text(256).nullable()).describe('What the rotation is for.'),
  environment: environmentSlug(),
  secretPath: path(),
  isAutoRotationEnabled: z.boolean().default(true).describe('Run on the schedule (otherwise only on demand).'),
  rotationInterval: integer(1, 365)
    .meta({ examples: [30] })
    .describe('Days between scheduled runs.'),
  rotateAtUtc: rotateAtUtcSchema.default({ hours: 0, minutes: 0 }),
  consumerWaitMinutes: integer(1, 10_080)
    .default(60)
    .describe(
      'How long a run waits for the Integrations that read the keys to sync (and roll their workloads) before it retires the credential before the active one; past it the rotation stops with status `failed`, and the previous credential stays valid.',
    ),
};
const commonUpdateFields = {
  name: optional(rotationName()).describe('A new name.'),
  description: optional(text(256).nullable()).describe('A new description.'),
  isAutoRotationEnabled: optional(z.boolean()).describe('Run on the schedule, or only on demand.'),
  rotationInterval: optional(integer(1, 365).meta({ examples: [30] })).describe('Days between scheduled runs; the next run is computed again from the last one.'),
  rotateAtUtc: optional(rotateAtUtcSchema).describe('A new time of day (UTC).'),
  consumerWaitMinutes: optional(integer(1, 10_080)).describe('A new window for consumers to take a credential.'),
};

export const createPostgresRotationSchema = z.object({
  ...commonCreateFields,
  connectionId: id()
    .meta({ examples: ['5e7a9c1e-3b5d-4f7a-9c1e-3b5d7f9a1c2e'] })
    .describe('The PostgreSQL connection (`/api/v1/app-connections/postgres`) the passwords are set through.'),
  parameters: postgresParametersSchema.describe('The two roles and how their passwords look.'),
  secretsMapping: postgresSecretsMappingSchema.describe('Which secret keys hold the active username and password.'),
});
export type CreatePostgresRotationInput = z.infer<typeof createPostgresRotationSchema>;
export const updatePostgresRotationSchema = z.object(commonUpdateFields);

export const createGeneratedRotationSchema = z.object({
  ...commonCreateFields,
  parameters: generatedParametersSchema.describe('What to generate: `kind` and its settings.'),
  secretsMapping: generatedSecretsMappingSchema,
});
export type CreateGeneratedRotationInput = z.infer<typeof createGeneratedRotationSchema>;
export const updateGeneratedRotationSchema = z.object(commonUpdateFields);
export type UpdateRotationInput = z.infer<typeof updatePostgresRotationSchema>;

export const ROTATION_STATUSES = ['success', 'failed', 'rotating', 'waiting'] as const;

const TIME = '2026-03-02T03:30:00.000Z';
export const secretRotationSchema = z.object({
  id: z.string(),
  name: z.string().meta({ examples: ['orders-db-credentials'] }),
  description: z.string().nullable(),
  type: z.enum([POSTGRES_CREDENTIALS, GENERATED_SECRET]),
  projectId: z.string(),
  connectionId: z
    .string()
    .nullable()
    .meta({ examples: ['5e7a9c1e-3b5d-4f7a-9c1e-3b5d7f9a1c2e'] }),
  connection: z
    .object({
      app: z.literal('postgres'),
      name: z.string().meta({ examples: ['orders-db'] }),
      id: z.string().meta({ examples: ['5e7a9c1e-3b5d-4f7a-9c1e-3b5d7f9a1c2e'] }),
    })
    .nullable(),
  environment: z.object({ slug: z.string(), name: z.string(), id: z.string() }),
  folder: z.object({ id: z.string(), path: z.string() }),
  parameters: z.record(z.string(), z.unknown()).meta({ examples: [{ username1: 'orders_app_a', username2: 'orders_app_b' }] }),
  secretsMapping: z.record(z.string(), z.string()).meta({ examples: [{ username: 'DB_USER', password: 'DB_PASSWORD' }] }),
  isAutoRotationEnabled: z.boolean().meta({ examples: [true] }),
  rotationInterval: z.number().meta({ examples: [30] }),
  rotateAtUtc: rotateAtUtcSchema,
  activeIndex: z
    .number()
    .meta({ examples: [1] })
    .describe('Which credential is active: 0 (the first role) or 1.'),
  rotationStatus: z.enum(ROTATION_STATUSES),
  lastRotationMessage: z.string().nullable().describe('Why the last run failed: a fixed sentence, never a value.'),
  lastRotationAttemptedAt: z
    .string()
    .nullable()
    .meta({ examples: [TIME] }),
  lastRotatedAt: z
    .string()
    .nullable()
    .meta({ examples: [TIME] }),
  nextRotationAt: z
    .string()
    .nullable()
    .meta({ examples: ['2026-04-01T03:30:00.000Z'] }),
  isLastRotationManual: z.boolean().meta({ examples: [false] }),
  consumerWaitMinutes: z.number().meta({ examples: [60] }),
  waitingFor: z
    .array(z.string())
    .meta({ examples: [['local/shop/orders-db']] })
    .describe('The Integrations (cluster/namespace/name) that have not yet taken the active credential: the previous one is not retired until they have.'),
  waitingSince: z
    .string()
    .nullable()
    .meta({ examples: ['2026-03-02T03:30:00.000Z'] }),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type SecretRotationResponse = z.infer<typeof secretRotationSchema>;

export const postgresGeneratedCredentialsSchema = z.array(z.object({ username: z.string(), password: z.string() })).meta({
  examples: [
    [
      { username: 'orders_app_a', password: 'q8Vd-2mKx7…' },
      { username: 'orders_app_b', password: 'Zp4_c9LwT1…' },
    ],
  ],
});
export const generatedValueCredentialsSchema = z.array(z.record(z.string(), z.string())).meta({ examples: [[{ value: '3f1c9a…' }, { value: '8b2e0d…' }]] });
