/**
 * The vocabulary of condition reasons: every reason a Ready, Synced or
 * Reloaded condition (and a failure's Warning Event) carries, with what it
 * means. The README's table "Condition reasons" lists the same names with the
 * same meanings (test/unit/operator/condition-reasons.test.ts compares them);
 * the CRDs' descriptions point there.
 */
export const CONDITION_REASONS = {
  // in sync
  Reconciled: 'A SecretsProject or SecretImport is in line with its spec (Ready=True).',
  Synced:
    "An Integration's target holds the selected secrets (Ready and Synced True); also the Event when a change updates a target (a target's first write is told by the status alone: an Event for each would be one more apiserver request per Integration as a fleet starts).",
  KeysSkipped: 'The target holds the selected secrets except keys that cannot be data keys, named in status.skippedKeys (Synced=True); also a Warning Event.',
  Paused: 'The Integration is inactive (spec.isActive false, or isActive in the API): Ready=True, Synced=False, the target is not updated.',
  // Coffer's answers
  CofferUnavailable: "Coffer's server or database does not answer; the target keeps its last data, tried again every 10 s.",
  CofferAuthFailed: "Coffer refused the operator's credentials (401); nothing is synced until they are valid again.",
  Rejected: 'Coffer refused a request for another reason (a 4xx), named in the message; tried again every minute.',
  NotFound: 'Something an Integration reads does not exist in Coffer (a 404 that is none of the more precise reasons).',
  // tenancy and the project
  Forbidden: "The resource's namespace may not use the project (not declared there, no grant, not in allowedNamespaces); nothing is read.",
  GrantMissing: 'A SecretsProject names a project that exists and its namespace holds no grant for it.',
  GrantRevoked: "The namespace's grant for the project was revoked; an Integration's copy is removed.",
  ProjectClaimed: 'Another SecretsProject already declares this project.',
  ProjectNotFound: 'The SecretsProject named by spec.projectRef does not exist in the namespace.',
  ProjectNotDeclared: 'No SecretsProject in the cluster declares the project named by spec.projectSlug.',
  ProjectNotReady: 'The SecretsProject declaring the project is being deleted or has not declared it yet.',
  ProjectDeleted: 'The project was deleted through the API and is not recreated (spec.onProjectDeleted: Fail); what uses it keeps its last data.',
  EnvironmentNotFound: "A source's environment does not exist; the target keeps its last data unless target.deletionPolicy is Delete.",
  FolderNotFound: "A source's folder does not exist; the target keeps its last data unless target.deletionPolicy is Delete.",
  MissingPermissions: "The operator's identity lacks what a sync needs in the project; named in the message, tried again every minute.",
  // the spec and the target
  InvalidSpec: 'A field of the spec cannot be used (named in the message); nothing is written.',
  TemplateError: 'target.template failed to render; nothing is written, the target keeps its last data.',
  TargetMissing: 'creationPolicy Merge needs the target to exist; it does not.',
  InstallationConflict: 'The resource or its target is managed by another Coffer installation; this one leaves it alone (also a Warning Event).',
  KeyConflict: 'A key of a Merge target is held with another value by another Integration or tool; none of its keys are written.',
  SecretConflict: 'The target Secret exists and is not managed by this Integration (or is owned as a whole by another one).',
  ConfigMapConflict: 'The target ConfigMap exists and is not managed by this Integration (or is owned as a whole by another one).',
  SecretTooLarge: 'The data exceeds the 1 MiB a Secret holds; nothing is written.',
  ConfigMapTooLarge: 'The data exceeds the 1 MiB a ConfigMap holds; nothing is written.',
  SecretInvalid: 'The apiserver refused the Secret as invalid (422); its message is quoted.',
  ConfigMapInvalid: 'The apiserver refused the ConfigMap as invalid (422); its message is quoted.',
  SecretForbidden: "The apiserver refused the operator's write of the Secret (RBAC).",
  ConfigMapForbidden: "The apiserver refused the operator's write of the ConfigMap (RBAC).",
  SecretRefused: 'The apiserver refused the Secret for another reason; its message is quoted.',
  ConfigMapRefused: 'The apiserver refused the ConfigMap for another reason; its message is quoted.',
  SecretTypeMismatch: "The data lacks what the Secret's type requires; nothing is written.",
  SecretTypeUnsupported: 'Secrets of this type are filled by Kubernetes; Coffer does not write them.',
  DigestKeyUnavailable: "The installation's digest key (Secret coffer-reload-key) could not be read or made; nothing is written, tried again every 10 s.",
  // workload reload (the Reloaded condition)
  UpToDate: 'Every workload reading the target runs its current keys.',
  Rolled: 'Workloads were rolled for a changed key (named, with the revision); also the Event on the Integration and the workload.',
  RolloutPending: 'A rollout waits for the debounce window.',
  RolloutFailed: 'The apiserver refused a rollout, or the key of the reload checksums could not be read; tried again.',
  ReloadForbidden: 'Workload reload is off: the operator lacks the RBAC for it; the Secret syncs as usual.',
  WorkloadNotFound: 'A workload named in spec.reload does not exist, or reads nothing of the target.',
} as const satisfies Record<string, string>;

export type ConditionReason = keyof typeof CONDITION_REASONS;

/** Reasons of Events that are no condition's. */
export const EVENT_REASONS = {
  DriftRepaired: 'A managed target was edited, deleted or given keys by hand and has been put back.',
  KeyCollision: 'A key of the target came from more than one place; the place whose value it holds is named (status.collisions).',
  SecretRotation:
    'A secret rotation writing what the Integration reads reached a phase (rotated, waiting for its consumers, stopped, previous credential retired); names the rotation, never a value.',
} as const satisfies Record<string, string>;

export type EventReason = ConditionReason | keyof typeof EVENT_REASONS;

export function isConditionReason(value: string): value is ConditionReason {
  return Object.hasOwn(CONDITION_REASONS, value);
}
