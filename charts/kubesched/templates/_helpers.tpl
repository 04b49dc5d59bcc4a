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

{{/* scheduler.featureGates (a map of gate name to bool) as --feature-gates' value: Name=bool
pairs sorted by name, joined by commas. A value that is not a bool is refused here, with its
name; kubesched refuses a gate it does not know when it starts. */}}
{{- define "kubesched.featureGates" -}}
{{- $gates := . -}}
{{- $pairs := list -}}
{{- range $name := keys $gates | sortAlpha -}}
{{- $v := index $gates $name -}}
{{- if not (kindIs "bool" $v) -}}
{{- fail (printf "scheduler.featureGates.%s: %s is a %s, not a bool (write true or false, unquoted)" $name (toString $v | quote) (kindOf $v)) -}}
{{- end -}}
{{- $pairs = append $pairs (printf "%s=%t" $name $v) -}}
{{- end -}}
{{- join "," $pairs -}}
{{- end -}}

{{/* Whether scheduler.featureGates turns GenericWorkload on (upstream's gang scheduling). */}}
{{- define "kubesched.genericWorkload" -}}
{{- if eq (index (.Values.scheduler.featureGates | default dict) "GenericWorkload" | toString) "true" -}}true{{- end -}}
{{- end -}}
