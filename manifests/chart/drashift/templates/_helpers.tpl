{{/*
drashift runs in drashift-system only: the controller writes its freeze
parameters there and the freeze policy's binding reads them there
(manifests/freeze-policy.yaml). Any other release namespace is refused.
*/}}
{{- define "drashift.checkNamespace" -}}
{{- if ne .Release.Namespace "drashift-system" -}}
{{- fail (printf "drashift is installed in the namespace drashift-system, not %q (its freeze parameters and the freeze policy's binding live there): helm install -n drashift-system" .Release.Namespace) -}}
{{- end -}}
{{- end -}}
