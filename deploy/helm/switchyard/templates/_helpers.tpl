{{/* Names and labels shared by the templates. */}}

{{- define "switchyard.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's resource name: the release name, with the chart's name
appended unless the release name already contains it. */}}
{{- define "switchyard.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "switchyard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "switchyard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "switchyard.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "switchyard.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "switchyard.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "switchyard.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* PromQL label matchers selecting this release's pods. */}}
{{- define "switchyard.promSelector" -}}
{{- if .Values.keda.prometheus.selector -}}
{{- .Values.keda.prometheus.selector -}}
{{- else -}}
{{- printf "namespace=%q,pod=~%q" .Release.Namespace (printf "%s-.*" (include "switchyard.fullname" .)) -}}
{{- end -}}
{{- end -}}

{{/* The port /metrics is served on. */}}
{{- define "switchyard.metricsPort" -}}
{{- if .Values.management.separatePort -}}
{{- .Values.management.port -}}
{{- else -}}
8080
{{- end -}}
{{- end -}}

{{/* A Kubernetes memory quantity ("8Gi", "8G", "8192Mi", "8589934592") in
MiB, rounded down; "" for a form it does not know (an exponent, "m"). */}}
{{- define "switchyard.mebibytes" -}}
{{- $q := toString . -}}
{{- $num := regexFind "^[0-9]+(\\.[0-9]+)?" $q -}}
{{- $unit := trimPrefix $num $q -}}
{{- $per := dict "" (divf 1 1048576) "k" (divf 1000 1048576) "M" (divf 1000000 1048576) "G" (divf 1000000000 1048576) "T" (divf 1000000000000 1048576) "Ki" (divf 1 1024) "Mi" 1.0 "Gi" 1024.0 "Ti" 1048576.0 -}}
{{- if and $num (hasKey $per $unit) -}}
{{- mulf (float64 $num) (get $per $unit) | floor | int64 -}}
{{- end -}}
{{- end -}}

{{/* memoryHeadroomMiB is what the container needs beyond the workers'
memory_budget_mb: the front-end, pip while it installs a model's
requirements, the page cache of the model files. */}}
{{- define "switchyard.memoryHeadroomMiB" -}}512{{- end -}}

{{/* checkMemory refuses a memory_budget_mb that does not fit in the
container's memory limit with the headroom: the kernel would kill the pod
before the budget made the server evict a model. */}}
{{- define "switchyard.checkMemory" -}}
{{- $budget := index .Values.config "memory_budget_mb" | default "" | toString -}}
{{- $limit := "" -}}
{{- with .Values.resources.limits }}{{ $limit = index . "memory" | default "" }}{{ end -}}
{{- if and $budget $limit -}}
{{- $mib := include "switchyard.mebibytes" $limit -}}
{{- $room := include "switchyard.memoryHeadroomMiB" . | int64 -}}
{{- if and $mib (gt (add (int64 $budget) $room) (int64 $mib)) -}}
{{- fail (printf "config.memory_budget_mb %s does not fit resources.limits.memory %s (%s MiB) with %d MiB for the front-end and pip: raise the limit to at least %d Mi or lower the budget" $budget (toString $limit) $mib $room (add (int64 $budget) $room)) -}}
{{- end -}}
{{- end -}}
{{- end -}}
