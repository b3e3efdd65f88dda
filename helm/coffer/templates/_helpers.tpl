{{/* Chart name. */}}
{{- define "coffer.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: <release>-coffer, or the release name when it already contains the chart name. */}}
{{- define "coffer.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "coffer.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "coffer.labels" -}}
helm.sh/chart: {{ include "coffer.chart" . }}
{{ include "coffer.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: coffer
{{- end }}

{{- define "coffer.selectorLabels" -}}
app.kubernetes.io/name: {{ include "coffer.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "coffer.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "coffer.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "coffer.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* true when the database is an external PostgreSQL */}}
{{- define "coffer.externalDatabase" -}}
{{- if or .Values.database.url .Values.database.existingSecret }}true{{ end }}
{{- end }}

{{- define "coffer.databaseSecretName" -}}
{{- default (printf "%s-database" (include "coffer.fullname" .)) .Values.database.existingSecret }}
{{- end }}

{{- define "coffer.keysSecretName" -}}
{{- default (printf "%s-keys" (include "coffer.fullname" .)) .Values.keys.existingSecret }}
{{- end }}

{{- define "coffer.adminSecretName" -}}
{{- default (printf "%s-admin" (include "coffer.fullname" .)) .Values.bootstrap.secretName }}
{{- end }}

{{- define "coffer.adminPasswordSecretName" -}}
{{- default (printf "%s-admin-password" (include "coffer.fullname" .)) .Values.bootstrap.existingPasswordSecret }}
{{- end }}

{{- define "coffer.leaderElection" -}}
{{- if eq (toString .Values.operator.leaderElection) "" }}{{ gt (int .Values.replicaCount) 1 }}{{ else }}{{ .Values.operator.leaderElection }}{{ end }}
{{- end }}

{{/* Fails rendering for settings that cannot work. */}}
{{- define "coffer.validate" -}}
{{- if .Values.remote.enabled }}
{{- if not .Values.remote.server }}{{ fail "remote.enabled needs remote.server: the URL of the Coffer server to sync from" }}{{ end }}
{{- if not .Values.remote.clusterName }}{{ fail "remote.enabled needs remote.clusterName: this cluster's name, what namespace grants and integration records name" }}{{ end }}
{{- if and (eq .Values.remote.authMethod "kubernetes") (not .Values.remote.identityId) }}{{ fail "remote.enabled with remote.authMethod=kubernetes needs remote.identityId: the machine identity (with Kubernetes Auth) the operator logs in as; or set remote.authMethod=universal" }}{{ end }}
{{- end }}
{{- if and (gt (int .Values.replicaCount) 1) (not (include "coffer.externalDatabase" .)) (not .Values.remote.enabled) }}
{{- fail (printf "replicaCount=%d needs an external PostgreSQL: set database.url or database.existingSecret (the embedded database serves one replica only)" (int .Values.replicaCount)) }}
{{- end }}
{{- if and .Values.database.url .Values.database.existingSecret }}
{{- fail "set either database.url or database.existingSecret, not both" }}
{{- end }}
{{- if not (has .Values.rbac.scope (list "cluster" "namespace")) }}
{{- fail (printf "rbac.scope must be cluster or namespace, not %q" .Values.rbac.scope) }}
{{- end }}
{{- end }}

{{/*
The operator's permissions: exactly the Kubernetes calls it makes (src/operator/kube-api.ts,
informers.ts). Shared by the ClusterRole (rbac.scope=cluster) and the Role (namespace).
*/}}
{{- define "coffer.operatorRules" -}}
# The three kinds: informers (list/watch), finalizers (merge patch of metadata), a re-read when a status write conflicts (get).
- apiGroups: [coffer.dev]
  resources: [secretsprojects, secretimports, integrations]
  verbs: [get, list, watch, patch]
# Conditions and observedGeneration: the status subresource replaced (update) when the informer holds the
# resource at the version written on, else merge-patched.
- apiGroups: [coffer.dev]
  resources: [secretsprojects/status, secretimports/status, integrations/status]
  verbs: [update, patch]
# Managed Secrets and ConfigMaps: informer, drift checks, server-side apply (creates when missing), deletion.
- apiGroups: [""]
  resources: [secrets, configmaps]
  verbs: [list, watch, get, create, patch, delete]
# Sync and failure Events.
- apiGroups: [""]
  resources: [events]
  verbs: [create]
{{- if .Values.reload.enabled }}
# Workload reload (reload.enabled): watch the workloads, patch their checksum annotations.
- apiGroups: [apps]
  resources: [deployments, statefulsets, daemonsets]
  verbs: [list, watch, patch]
{{- end }}
{{- end }}
