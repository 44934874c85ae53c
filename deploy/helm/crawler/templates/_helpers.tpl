{{/* Chart name, truncated to the 63 characters of a DNS label. */}}
{{- define "crawler.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release full name; components append -frontier, -fetcher, -parser, -renderer. */}}
{{- define "crawler.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 50 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 50 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "crawler.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The components this release runs, as a JSON list (for range: | fromJsonArray). */}}
{{- define "crawler.components" -}}
{{- $c := list "frontier" "fetcher" "parser" }}
{{- if .Values.renderer.enabled }}{{ $c = append $c "renderer" }}{{ end }}
{{- toJson $c }}
{{- end }}

{{- define "crawler.selectorLabels" -}}
app.kubernetes.io/name: {{ include "crawler.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "crawler.labels" -}}
helm.sh/chart: {{ include "crawler.chart" . }}
{{ include "crawler.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: crawler
{{- end }}

{{/* Labels of one component: (dict "ctx" $ "component" "fetcher") */}}
{{- define "crawler.componentLabels" -}}
{{ include "crawler.labels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "crawler.componentSelectorLabels" -}}
{{ include "crawler.selectorLabels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "crawler.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "crawler.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "crawler.secretName" -}}
{{- default (include "crawler.fullname" .) .Values.secret.existingSecret }}
{{- end }}

{{- define "crawler.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}

{{/*
The renderer's image: the Dockerfile's `renderer` target (Debian with chromium),
published beside the distroless image as <tag><tagSuffix> unless given whole.
*/}}
{{- define "crawler.rendererImage" -}}
{{- $i := .Values.renderer.image }}
{{- $tag := $i.tag | default (printf "%s%s" (.Values.image.tag | default .Chart.AppVersion) $i.tagSuffix) }}
{{- printf "%s:%s" ($i.repository | default .Values.image.repository) $tag }}
{{- end }}

{{/*
The renderer's memory in MiB: the browser with no page open, the renderer
process and its sub-resource cache, and each tab's JavaScript heap limit with
what a tab holds beyond it. A page that outgrows its heap is stopped by the
browser, so the pod stays under this with every tab at its limit.
*/}}
{{- define "crawler.rendererMemoryMiB" -}}
{{- $v := .Values.renderer }}
{{- add $v.memory.browserMiB $v.memory.processMiB $v.cacheMiB (mul $v.tabs (add $v.heapMiB $v.memory.tabOverheadMiB)) }}
{{- end }}

{{/* Kafka bootstrap servers for KEDA: (dict "ctx" $ "keda" .Values.fetcher.autoscaling.keda) */}}
{{- define "crawler.bootstrapServers" -}}
{{- if .keda.bootstrapServers }}
{{- .keda.bootstrapServers }}
{{- else }}
{{- .ctx.Values.config.broker | trimPrefix "kafka://" }}
{{- end }}
{{- end }}

{{/*
The pod spec shared by every component:
(dict "ctx" $ "component" "fetcher" "values" .Values.fetcher "env" (list ...) "volumes" ... )
and optionally "image" (default crawler.image), "resources" (default
.values.resources) and "tmpSizeLimit" (default 64Mi).
*/}}
{{- define "crawler.podTemplate" -}}
{{- $ctx := .ctx -}}
{{- $v := .values -}}
metadata:
  labels:
    {{- include "crawler.componentLabels" (dict "ctx" $ctx "component" .component) | nindent 4 }}
    {{- with $v.podLabels }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  annotations:
    checksum/config: {{ include (print $ctx.Template.BasePath "/configmap.yaml") $ctx | sha256sum }}
    {{- if not $ctx.Values.secret.existingSecret }}
    checksum/secret: {{ include (print $ctx.Template.BasePath "/secret.yaml") $ctx | sha256sum }}
    {{- end }}
    {{- with $v.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  serviceAccountName: {{ include "crawler.serviceAccountName" $ctx }}
  automountServiceAccountToken: {{ $ctx.Values.serviceAccount.automountServiceAccountToken }}
  {{- with $ctx.Values.imagePullSecrets }}
  imagePullSecrets:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  securityContext:
    {{- toYaml $ctx.Values.podSecurityContext | nindent 4 }}
  terminationGracePeriodSeconds: {{ $v.terminationGracePeriodSeconds }}
  containers:
    - name: {{ .component }}
      image: {{ .image | default (include "crawler.image" $ctx) | quote }}
      imagePullPolicy: {{ $ctx.Values.image.pullPolicy }}
      command:
        {{- toYaml $v.command | nindent 8 }}
      {{- with $v.args }}
      args:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      ports:
        - name: http
          containerPort: {{ $v.port }}
          protocol: TCP
      envFrom:
        - configMapRef:
            name: {{ include "crawler.fullname" $ctx }}
        - secretRef:
            name: {{ include "crawler.secretName" $ctx }}
      env:
        - name: CRAWLER_LISTEN
          value: {{ printf ":%v" $v.port | quote }}
        {{- with .env }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
        {{- range $k, $val := $v.env }}
        - name: {{ $k }}
          value: {{ $val | quote }}
        {{- end }}
      livenessProbe:
        httpGet:
          path: /-/healthy
          port: http
        initialDelaySeconds: 10
        periodSeconds: 10
        timeoutSeconds: 5
        failureThreshold: 6
      readinessProbe:
        httpGet:
          path: /-/ready
          port: http
        periodSeconds: 5
        timeoutSeconds: 5
        failureThreshold: 3
      resources:
        {{- toYaml (.resources | default $v.resources) | nindent 8 }}
      securityContext:
        {{- toYaml $ctx.Values.securityContext | nindent 8 }}
      volumeMounts:
        - name: tmp
          mountPath: /tmp
        {{- with .volumeMounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
  volumes:
    - name: tmp
      emptyDir:
        sizeLimit: {{ .tmpSizeLimit | default "64Mi" }}
    {{- with .volumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $v.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $v.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end }}

{{/* Fails when both autoscalers are on for one component. */}}
{{- define "crawler.checkAutoscaling" -}}
{{- if and .values.autoscaling.hpa.enabled .values.autoscaling.keda.enabled }}
{{- fail (printf "%s: autoscaling.hpa and autoscaling.keda are both enabled; choose one" .component) }}
{{- end }}
{{- end }}
