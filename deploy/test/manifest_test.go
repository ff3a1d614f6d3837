package deploytest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// object is one YAML document of a manifest.
type object struct {
	source string // where it came from: a file or template, and its place
	raw    []byte
	fields map[string]any
}

func (o object) key() string {
	return fmt.Sprintf("%v %v", o.fields["apiVersion"], o.fields["kind"])
}

func (o object) name() string {
	md, _ := o.fields["metadata"].(map[string]any)
	n, _ := md["name"].(string)
	return n
}

// builtin are the Kubernetes kinds the manifests use, decoded strictly
// into k8s.io/api's types: a field the type lacks is an error.
var builtin = map[string]func() any{
	"apps/v1 Deployment":                 func() any { return &appsv1.Deployment{} },
	"v1 Service":                         func() any { return &corev1.Service{} },
	"v1 ServiceAccount":                  func() any { return &corev1.ServiceAccount{} },
	"policy/v1 PodDisruptionBudget":      func() any { return &policyv1.PodDisruptionBudget{} },
	"networking.k8s.io/v1 Ingress":       func() any { return &networkingv1.Ingress{} },
	"apps/v1 StatefulSet":                func() any { return &appsv1.StatefulSet{} },
	"v1 ConfigMap":                       func() any { return &corev1.ConfigMap{} },
	"networking.k8s.io/v1 NetworkPolicy": func() any { return &networkingv1.NetworkPolicy{} },
	"autoscaling/v2 HorizontalPodAutoscaler": func() any {
		return &autoscalingv2.HorizontalPodAutoscaler{}
	},
}

// decodeStrict decodes a YAML document into v as the API server's strict
// field validation does: keys match case-sensitively, and an unknown or
// duplicate field is an error.
func decodeStrict(doc []byte, v any) error {
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(js, v, kjson.DisallowDuplicateFields, kjson.DisallowUnknownFields)
	if err != nil {
		return err
	}
	return errors.Join(strict...)
}

// volumeSources returns what the API server says of volumes that name no
// source or more than one ("may not specify more than 1 volume type").
func volumeSources(vols []corev1.Volume) []string {
	var out []string
	for _, v := range vols {
		js, err := json.Marshal(v.VolumeSource)
		if err != nil {
			out = append(out, err.Error())
			continue
		}
		var sources map[string]any
		if err := json.Unmarshal(js, &sources); err != nil {
			out = append(out, err.Error())
			continue
		}
		if len(sources) != 1 {
			out = append(out, fmt.Sprintf("volume %s has %d sources (%v), want 1", v.Name, len(sources), slices.Sorted(maps.Keys(sources))))
		}
	}
	return out
}

// splitDocs returns the non-empty YAML documents of data.
func splitDocs(t testing.TB, source string, data []byte) []object {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var out []object
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", source, err)
		}
		js, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatalf("%s, document %d: %v", source, i, err)
		}
		if string(js) == "null" {
			continue
		}
		var fields map[string]any
		if err := utiljson.Unmarshal(js, &fields); err != nil {
			t.Fatalf("%s, document %d: %v", source, i, err)
		}
		out = append(out, object{source: fmt.Sprintf("%s #%d", source, i), raw: doc, fields: fields})
	}
}

// readManifest reads a file of deploy/ with its placeholders filled in.
func readManifest(t *testing.T, path string) []object {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return splitDocs(t, path, []byte(fillPlaceholders(string(data))))
}

// fillPlaceholders replaces the <release>, <namespace> and similar marks of
// the example files with values a cluster would accept.
func fillPlaceholders(s string) string {
	return strings.NewReplacer("<release>", "rel", "<namespace>", "ml", "<gateway>", "eg", "<bucket>", "models-bucket").Replace(s)
}

// checkObjects decodes or validates every object and returns the built-in
// ones, decoded, by "Kind/name".
func checkObjects(t testing.TB, objs []object, crds map[string]*crdSchema) map[string]any {
	t.Helper()
	typed := map[string]any{}
	for _, o := range objs {
		if mk, ok := builtin[o.key()]; ok {
			v := mk()
			if err := decodeStrict(o.raw, v); err != nil {
				t.Errorf("%s (%s): %v", o.source, o.key(), err)
				continue
			}
			for _, msg := range utilvalidation.IsDNS1123Subdomain(o.name()) {
				t.Errorf("%s: metadata.name %q: %s", o.source, o.name(), msg)
			}
			if d, ok := v.(*appsv1.Deployment); ok {
				for _, msg := range volumeSources(d.Spec.Template.Spec.Volumes) {
					t.Errorf("%s: %s", o.source, msg)
				}
			}
			typed[fmt.Sprintf("%v/%s", o.fields["kind"], o.name())] = v
			continue
		}
		s, ok := crds[o.key()]
		if !ok {
			t.Errorf("%s: no type or CRD known for %s", o.source, o.key())
			continue
		}
		for _, p := range s.check(o.fields) {
			t.Errorf("%s (%s %s): %s", o.source, o.key(), o.name(), p)
		}
	}
	return typed
}
