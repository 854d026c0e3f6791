{{/* Labels of every object of the release. */}}
{{- define "queue-scheduler.labels" -}}
app.kubernetes.io/name: queue-scheduler
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* The pods' labels, which the Deployment, the Services and the PodDisruptionBudget select. */}}
{{- define "queue-scheduler.selectorLabels" -}}
app.kubernetes.io/name: queue-scheduler
{{- end }}

{{- define "queue-scheduler.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* The QueueState args: the values', with the certificate directory when cert-manager issues it. */}}
{{- define "queue-scheduler.queueStateArgs" -}}
{{- $args := deepCopy .Values.pluginArgs.queueState -}}
{{- if .Values.webhook.certManager.enabled -}}
{{- $webhook := get $args "webhook" | default dict -}}
{{- $_ := set $webhook "certDir" "/etc/queue-scheduler/webhook-certs" -}}
{{- $_ := set $args "webhook" $webhook -}}
{{- end -}}
{{- if not .Values.visibility.enabled -}}
{{- $visibility := get $args "visibility" | default dict -}}
{{- $_ := set $visibility "disabled" true -}}
{{- $_ := set $args "visibility" $visibility -}}
{{- end -}}
{{- toJson $args -}}
{{- end }}

{{/* Annotations of the webhook configurations: cert-manager's CA injection when it issues. */}}
{{- define "queue-scheduler.webhookAnnotations" -}}
{{- if .Values.webhook.certManager.enabled }}
annotations:
  cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/queue-scheduler-webhook
{{- end }}
{{- end }}
