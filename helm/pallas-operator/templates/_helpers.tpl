{{/* The chart's name in object names: nameOverride, else the chart's. */}}
{{- define "pallas.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The name of the release's objects: fullnameOverride, else <release>-<name>. */}}
{{- define "pallas.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := include "pallas.name" . -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
The operator's selector labels. app.kubernetes.io/name stays the chart's name whatever nameOverride
says: every fleet's NetworkPolicy admits the operator's pod by it (docs/operator.md, "Network").
*/}}
{{- define "pallas.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "pallas.labels" -}}
{{ include "pallas.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: pallas
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/*
The chart's PostgreSQL: a name of its own, so that no selector of the operator's (its Deployment,
its metrics Service, its ServiceMonitor) matches it.
*/}}
{{- define "pallas.postgresql.selectorLabels" -}}
app.kubernetes.io/name: postgresql
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: conversation-store
{{- end -}}

{{- define "pallas.postgresql.labels" -}}
{{ include "pallas.postgresql.selectorLabels" . }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: pallas
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "pallas.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "pallas.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* registry/repository:tag or registry/repository@digest; call with (list image .Chart) */}}
{{- define "pallas.image" -}}
{{- $image := index . 0 -}}
{{- $chart := index . 1 -}}
{{- $repository := $image.repository -}}
{{- if $image.registry -}}
{{- $repository = printf "%s/%s" $image.registry $image.repository -}}
{{- end -}}
{{- if $image.digest -}}
{{- printf "%s@%s" $repository $image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repository (default $chart.AppVersion $image.tag) -}}
{{- end -}}
{{- end -}}

{{/*
What the operator reads and writes in the namespaces it watches (docs/operator.md). It holds
get/list/watch on ConfigMaps because it grants exactly that to each registry's Role.
*/}}
{{- define "pallas.operatorRules" -}}
- apiGroups: [pallas.helu.ca]
  resources: [pallasdeployments]
  verbs: [get, list, watch]
- apiGroups: [pallas.helu.ca]
  resources: [pallasdeployments/status]
  verbs: [get, patch, update]
- apiGroups: [""]
  resources: [configmaps, secrets, services, serviceaccounts]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [autoscaling]
  resources: [horizontalpodautoscalers]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [policy]
  resources: [poddisruptionbudgets]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [rbac.authorization.k8s.io]
  resources: [roles, rolebindings]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [monitoring.coreos.com]
  resources: [servicemonitors]
  verbs: [get, list, watch, create, update, patch, delete]
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch]
{{- end -}}

{{- /*
A security context as given ((list CONTEXT .)), less runAsUser, runAsGroup and fsGroup where the
platform assigns its own: on OpenShift, whose restricted-v2 SCC gives every pod IDs from its
namespace's range and refuses a fixed one outside it (compatibility.openshift.adaptSecurityContext:
auto, the default, detects it by the API group security.openshift.io/v1; force: always).
*/ -}}
{{- define "pallas.securityContext" -}}
{{- $context := index . 0 | default dict }}
{{- $root := index . 1 }}
{{- $mode := dig "openshift" "adaptSecurityContext" "auto" ($root.Values.compatibility | default dict) }}
{{- if or (eq $mode "force") (and (eq $mode "auto") ($root.Capabilities.APIVersions.Has "security.openshift.io/v1")) }}
{{- $context = omit $context "runAsUser" "runAsGroup" "fsGroup" }}
{{- end }}
{{- with $context }}
{{- toYaml . }}
{{- end }}
{{- end }}
