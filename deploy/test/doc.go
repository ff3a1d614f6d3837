// Package deploytest checks the deployment files under deploy/ without a
// cluster: the Helm chart is rendered and linted with Helm's own packages,
// Kubernetes objects are decoded strictly into k8s.io/api's types, custom
// resources (KEDA, KServe, Gateway API, Envoy Gateway, prometheus-operator)
// are validated against their projects' CRDs as an API server would
// (OpenAPI schema, unknown fields, CEL rules), the Envoy configuration is
// decoded into Envoy's API and checked by its validation rules, and the
// HAProxy configuration is run in front of a stand-in server. It is a Go
// module of its own so that its dependencies stay out of switchyard's.
//
// Run it with "cd deploy/test && go test ./..." (docs/deploy.md).
package deploytest
