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
