{{/* The chart's name. */}}
{{- define "tfjob-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The objects' name: the release's when it contains the chart's name (helm install tfjob-operator ...). */}}
{{- define "tfjob-operator.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "tfjob-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "tfjob-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "tfjob-operator.labels" -}}
{{ include "tfjob-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: libtfjob
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "tfjob-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "tfjob-operator.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name: the name of an existing ServiceAccount (serviceAccount.create is false)" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "tfjob-operator.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The operator's flags, one per line, from the values (docs/install.md, "Helm values"). */}}
{{- define "tfjob-operator.args" -}}
{{- if not (has .Values.compat (list "" "documented" "training-operator-1.9")) }}
{{- fail (printf "compat: %q is not a compat mode (\"\", documented, training-operator-1.9)" .Values.compat) }}
{{- end }}
{{- if not (has .Values.logLevel (list "debug" "info" "warn" "error")) }}
{{- fail (printf "logLevel: %q is not debug, info, warn or error" .Values.logLevel) }}
{{- end }}
{{- if and (gt (int .Values.replicas) 1) (not .Values.leaderElection.enabled) }}
{{- fail "replicas > 1 needs leaderElection.enabled: true (two leaders would reconcile the same jobs)" }}
{{- end }}
- --threadiness={{ int .Values.threadiness }}
- --kube-api-qps={{ .Values.kubeAPI.qps }}
- --kube-api-burst={{ int .Values.kubeAPI.burst }}
- --metrics-bind-address=:{{ int .Values.metrics.port }}
- --health-probe-bind-address=:{{ int .Values.health.port }}
- --log-level={{ .Values.logLevel }}
{{- if .Values.compat }}
- --compat={{ .Values.compat }}
{{- end }}
{{- if .Values.watchNamespace }}
- --namespace={{ .Values.watchNamespace }}
{{- end }}
{{- if .Values.leaderElection.enabled }}
- --leader-elect
- --leader-election-namespace={{ .Release.Namespace }}
{{- if .Values.leaderElection.id }}
- --leader-election-id={{ .Values.leaderElection.id }}
{{- end }}
{{- end }}
{{- if .Values.webhook.enabled }}
- --webhook-server-port={{ int .Values.webhook.port }}
- --webhook-service-name={{ .Values.webhook.serviceName }}
- --webhook-secret-name={{ .Values.webhook.secretName }}
- --webhook-config-name={{ .Values.webhook.configName }}
{{- if .Values.webhook.certValidity }}
- --webhook-cert-validity={{ .Values.webhook.certValidity }}
{{- end }}
{{- else }}
- --webhook-server-port=0
{{- end }}
{{- if .Values.gangSchedulerName }}
- --gang-scheduler-name={{ .Values.gangSchedulerName }}
{{- end }}
{{- if .Values.clusterDomain }}
- --cluster-domain={{ .Values.clusterDomain }}
{{- end }}
{{- range .Values.extraArgs }}
- {{ . | quote }}
{{- end }}
{{- end -}}
