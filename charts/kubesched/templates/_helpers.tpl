{{/* The name of everything this release makes: the scheduler's name. */}}
{{- define "kubesched.name" -}}
{{- .Values.scheduler.name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "kubesched.labels" -}}
app.kubernetes.io/name: kubesched
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: scheduler
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "kubesched.selectorLabels" -}}
app.kubernetes.io/name: kubesched
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "kubesched.image" -}}
{{- printf "%s:%s" .Values.scheduler.image.repository (default .Chart.AppVersion .Values.scheduler.image.tag) -}}
{{- end -}}
