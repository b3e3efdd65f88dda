import { z } from 'zod';
import { CHANGE_KINDS, ROTATION_PHASES } from '../changes/change-feed.ts';
import { clusterNameSchema, namespaceNameSchema } from '../grants/grant-schema.ts';
import { integrationSchema, MANAGED_PAGE_MAX } from '../integrations/integration-schema.ts';
import { ROLLING_WORKLOADS_MAX, ROLLOUT_KINDS } from '../integrations/workload-rollout.ts';
import { CARRIED_KEYS_MAX, KEY_READERS_MAX, KEYS_PER_READER_MAX } from '../integrations/target-keys.ts';
import { SECRET_KEY_MAX } from '../secrets/secret-schema.ts';
import { effectivePermissionsSchema } from '../permissions/permission-schema.ts';
import { bigInteger, environmentSlug, exactText, flag, id, optional, optionalInteger, path, required, stringRecord, text } from '../validation/input.ts';

/**
 * The wire of the operator port (src/operator/port/coffer-port.ts) over HTTP: the
 * zod schemas of /api/v1/operator/* (the routes validate and document with them),
 * the parts of the public answers an operator reads, and the data of the change
 * stream's events. The remote client (src/remote/) parses every answer and event
 * with them: a server that answers another shape fails the call, it is never cast.
 */

// ---- /api/v1/operator/* requests ----

const clusterField = clusterNameSchema
  .optional()
  .describe('The cluster the credential acts for (checked, never trusted); may be left out.')
  .meta({ examples: ['cluster-b'] });

const place = {
  cluster: clusterField,
  namespace: namespaceNameSchema.describe('A namespace of that cluster.'),
};

const claimant = z
  .object({
    ...place,
    name: required(253).describe("The SecretsProject's name."),
    uid: required(128).describe("The SecretsProject's `metadata.uid`: a resource deleted and made again is another claimant."),
  })
  .describe('The SecretsProject that declares the project.');

const managedBy = required(253 + 64).describe('`<namespace>/<name>` of the Integration resource.');

/** Most places one sync reads: 11 sources, each with imports and references (a generous bound). */
const MAX_READ_PLACES = 10_000;

const readPlace = z.object({
  environmentId: id().describe("The environment's id."),
  path: path(),
  recursive: z.boolean().describe('And every folder below it.'),
});

export const declareClaimBody = z.object({
  claimant,
  slug: required(36).describe('The project slug the SecretsProject asks for.'),
  name: required(64).describe('The project name the SecretsProject asks for.'),
});

export const releaseClaimBody = z.object({ claimant, deleteProject: z.boolean().describe('Delete the project too (only one the claimant created).') });

export const authorizeUseBody = z.object({
  declaring: claimant
    .extend({ allowedNamespaces: z.array(namespaceNameSchema.describe('A namespace.')).max(1000).describe("The SecretsProject's `spec.allowedNamespaces`.") })
    .describe('The SecretsProject that declares the project.'),
  using: z.object(place).describe('Where the resource that wants the project lives.'),
});

export const claimantQuery = z.object({
  cluster: optional(clusterNameSchema).describe('The cluster; the one the credential acts for when absent (400 when it acts for none).'),
  slug: required(36).describe("The project's slug."),
});

export const upsertIntegrationBody = z.object({
  cluster: clusterField,
  managedBy,
  projectId: id().describe("The project's id."),
  environment: environmentSlug(),
  secretPath: path(),
  app: required(253).describe('The Secret the operator writes.'),
  owner: namespaceNameSchema.describe('The namespace of the resource.'),
  targetEnvironment: namespaceNameSchema.describe('The namespace of the Secret.'),
  isActive: z.boolean().optional().describe('Pause (false) or resume (true) the sync; the stored value when absent.'),
  metadata: stringRecord().optional().describe('Where the resource lives: installation, cluster, namespace, name, uid.'),
  reloads: z.boolean().optional().describe('The resource rolls workloads (spec.reload): the revision barrier waits for its reload too. The stored value when absent.'),
});

export const deleteIntegrationQuery = z.object({
  cluster: optional(clusterNameSchema).describe('The cluster the credential acts for (checked, never trusted); may be left out.'),
  managedBy,
});

export const listManagedQuery = z.object({
  cluster: optional(clusterNameSchema).describe('The cluster the credential acts for (checked, never trusted); may be left out.'),
  namespace: optional(namespaceNameSchema).describe("Only the records of this namespace's Integration resources."),
  after: optional(required(253 + 64).meta({ examples: ['shop/app'] })).describe('The `next` of the page before: names after this one.'),
  limit: optionalInteger(1, MANAGED_PAGE_MAX).describe(`How many names at most (1–${MANAGED_PAGE_MAX}, the most when absent).`),
});

export const managedListAnswer = z.object({
  managedBy: z.array(z.string()).describe('`<namespace>/<name>` of each Integration resource with a record, in order.'),
  next: z.string().nullable().describe('Where the next page starts (`after`); null on the last page.'),
});

export const integrationParams = z.object({ integrationId: id().describe("The integration's id.") });

const workloadRef = z.object({
  kind: z.enum(ROLLOUT_KINDS).describe('Its kind.'),
  namespace: namespaceNameSchema.describe("Its namespace: the Integration resource's own."),
  name: z
    .string()
    .min(1)
    .max(253)
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a Kubernetes object name')
    .describe('Its name.'),
});

/** A key's name in the target (a Secret or ConfigMap data key). */
const dataKeyName = exactText(253).min(1, 'must not be empty');

const targetKeys = z.strictObject({
  carried: z
    .array(
      z.strictObject({
        environment: environmentSlug(),
        path: path(),
        keys: z
          .array(
            z.strictObject({
              key: exactText(SECRET_KEY_MAX).min(1, 'must not be empty').describe("The secret's name in the folder."),
              as: dataKeyName.optional().describe('Its name in the target, when the Integration renames it.'),
            }),
          )
          .describe('The keys of the folder the target holds.'),
      }),
    )
    .refine((folders) => folders.reduce((count, folder) => count + folder.keys.length, 0) <= CARRIED_KEYS_MAX, `must name at most ${CARRIED_KEYS_MAX} keys in all`)
    .describe(`Where the target's keys came from: per folder (environment slug and path), the secrets it holds; at most ${CARRIED_KEYS_MAX} keys in all.`),
  templated: z
    .number()
    .int()
    .min(0)
    .max(1_048_576)
    .describe("How many of the target's keys its template made (from no one secret); a Secret holds at most 1 MiB, so never more than 1,048,576."),
  carriedTruncated: z.boolean().describe('The target holds more keys from secrets than `carried` names.'),
  readers: z
    .array(
      z.strictObject({
        ...workloadRef.shape,
        keys: z
          .array(dataKeyName)
          .max(KEYS_PER_READER_MAX)
          .nullable()
          .describe(`The target's keys its pod template names (at most ${KEYS_PER_READER_MAX}); null: every key (envFrom, a volume without items).`),
      }),
    )
    .max(KEY_READERS_MAX)
    .nullable()
    .describe(
      `The Deployments, StatefulSets and DaemonSets of the Integration resource's namespace whose pod template reads the target (env secretKeyRef or configMapKeyRef, envFrom, volumes), at most ${KEY_READERS_MAX}; null when the operator does not watch workloads.`,
    ),
  readersTruncated: z.boolean().describe('More workloads read the target than `readers` names, or one names more keys than it lists.'),
});

export const syncResultBody = z.object({
  isSynced: z.boolean().describe('Whether the Secret holds what the source resolves to.'),
  syncMessage: text(1024).nullable().describe('Why not, when it does not.'),
  syncedRevision: bigInteger(0, Number.MAX_SAFE_INTEGER)
    .nullable()
    .optional()
    .describe('The change-log revision the Secret reflects; the stored one when absent (a failed sync changed nothing).'),
  places: z
    .array(readPlace)
    .max(MAX_READ_PLACES)
    .optional()
    .describe(
      'Every place the sync read (its sources, recursive ones with what lies below, and the folders read through imports and references); the stored list when absent. The revision barrier decides with it which writes reached the Secret.',
    ),
  targetKeys: targetKeys
    .nullable()
    .optional()
    .describe(
      "Which keys the target holds, where each came from, and which workloads read which: names and kinds only, never a value (a field beyond these is refused). Shown by the console's Where it goes. The stored report when absent; null forgets it.",
    ),
});

export const reloadResultBody = z.object({
  reloadedRevision: bigInteger(0, Number.MAX_SAFE_INTEGER).describe('The change-log revision the workloads reflect.'),
  rolling: z
    .array(workloadRef)
    .max(ROLLING_WORKLOADS_MAX)
    .optional()
    .describe(
      'The workloads the reload rolls whose rollout has not finished (their status does not yet show every replica updated and available); empty when all have. The stored list when absent. Secret rotations wait for it before retiring a credential.',
    ),
});

export const operatorSecretsQuery = z.object({
  projectId: id().describe("The project's id."),
  environment: environmentSlug(),
  secretPath: path(),
  recursive: flag(false).describe('Also the folders below the path.'),
  includeImports: flag(true).describe('Also what the folders import.'),
  fresh: flag(false).describe(
    'Read from the database rather than the listing shared while the project revision stays the same (`coffer.dev/force-sync`: repairs a change made outside the change log).',
  ),
});

// ---- /api/v1/operator/* answers ----

export const installationAnswer = z.object({
  installationId: z.string().describe('The installation id.'),
  revision: z.number().describe('The newest committed change-log revision of the projects the caller may read (0 before any).'),
  cluster: z.string().nullable().describe('The registered cluster the credential acts for (null: none); an operator checks it against its own configuration at start.'),
});

export const declareClaimAnswer = z.object({ projectId: z.string().describe("The project's id."), created: z.boolean().describe('Whether this call created it.') });

export const releaseClaimAnswer = z.object({
  outcome: z.enum(['deleted', 'released', 'none']).describe('What happened: the project deleted, the claim released, or no claim.'),
});

export const authorizeUseAnswer = z.object({ projectId: z.string().describe("The project's id."), slug: z.string().describe("The project's slug.") });

export const claimantAnswer = z.object({
  claimant: z.object({ cluster: z.string(), namespace: z.string(), name: z.string(), uid: z.string() }).describe('The declaring SecretsProject.'),
});

export const integrationAnswer = z.object({ integration: integrationSchema });

export const messageAnswer = z.object({ message: z.string().describe('What happened.') });

const taggedValue = { key: z.string(), value: z.string(), tags: z.array(z.string()).describe('Tag slugs.') };

export const operatorListingAnswer = z.object({
  secrets: z.array(z.object({ ...taggedValue, path: z.string() })).describe("The folder's own secrets (and those below it)."),
  imports: z.array(z.object({ environment: z.string(), path: z.string(), secrets: z.array(z.object(taggedValue)) })).describe('Imported groups, in position order.'),
  environmentId: z.string().describe("The source environment's id."),
  reads: z
    .array(z.object({ environmentId: z.string(), path: z.string() }))
    .describe('Every folder the listing read where the caller may read secrets (never the name of one it may not read).'),
});

// ---- the parts of public answers the operator reads (their routes answer more) ----

const environmentFields = { id: z.string(), slug: z.string(), name: z.string() };

/** GET /api/v1/workspace/{id} */
export const workspaceAnswer = z.object({
  workspace: z.object({
    id: z.string(),
    slug: z.string(),
    name: z.string(),
    autoCapitalization: z.boolean(),
    environments: z.array(z.object(environmentFields)),
  }),
});

/** GET /api/v1/workspace/{id}/environments/{envId} */
export const environmentAnswer = z.object({ environment: z.object({ ...environmentFields, position: z.number() }) });

/** GET /api/v1/workspace/{id}/effective-permissions */
export const effectivePermissionsAnswer = effectivePermissionsSchema.pick({ permissions: true });

const importFields = z.object({ id: z.string(), position: z.number(), importPath: z.string(), importEnv: z.object({ slug: z.string() }) });

/** /api/v1/secret-imports/{id} (GET, POST, PATCH) */
export const secretImportAnswer = z.object({ secretImport: importFields });

/** GET /api/v1/secret-imports */
export const secretImportsAnswer = z.object({ secretImports: z.array(importFields) });

// ---- GET /api/v1/changes/stream: the data of each event ----

/** `ready` and `ping`: every change up to `revision` the caller may read was sent. */
export const revisionEvent = z.object({ revision: z.number() });

/** `reset`: the revision to resume after is not in the server's log; list again, then follow from `revision`. */
export const resetEvent = z.object({ revision: z.number(), reason: z.string(), message: z.string() });

/** `change`: one committed change the caller may read; the place, never a key or a value. */
export const changeEvent = z.object({
  revision: z.number(),
  kind: z.enum(CHANGE_KINDS),
  projectId: z.string(),
  environmentId: z.string().nullable(),
  environment: z.string().nullable(),
  secretPath: z.string().nullable(),
  time: z.string(),
  /** Kind `rotation` only: which secret rotation reached which phase (names only). */
  rotation: z.object({ rotation: z.string(), phase: z.enum(ROTATION_PHASES) }).optional(),
});
export type ChangeEvent = z.infer<typeof changeEvent>;

/** `error`, then the end of the stream: why the caller may read no more. */
export const streamErrorEvent = z.object({ message: z.string().optional(), statusCode: z.number().optional() }).loose();
