package deploytest

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utilvalidation "k8s.io/apimachinery/pkg/util/validation"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// crdSchema is one served version of a custom resource, ready to check
// objects as the API server would on create: defaults, the OpenAPI schema,
// unknown fields (what strict field validation refuses) and CEL rules.
type crdSchema struct {
	structural *structuralschema.Structural
	validator  validation.SchemaValidator
	cel        *cel.Validator
}

// crdSchemas reads CRD files from testdata/crds (plain or .gz) and returns
// a schema for each served "apiVersion kind".
func crdSchemas(t *testing.T, files ...string) map[string]*crdSchema {
	t.Helper()
	out := map[string]*crdSchema{}
	for _, f := range files {
		var crd apiextensionsv1.CustomResourceDefinition
		if err := decodeStrict(readCRD(t, f), &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema == nil {
				continue
			}
			key := crd.Spec.Group + "/" + v.Name + " " + crd.Spec.Names.Kind
			s, err := newCRDSchema(v.Schema.OpenAPIV3Schema)
			if err != nil {
				t.Fatalf("%s %s: %v", f, key, err)
			}
			out[key] = s
		}
	}
	return out
}

func readCRD(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "crds", name))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(name, ".gz") {
		return data
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	data, err = io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func newCRDSchema(v1 *apiextensionsv1.JSONSchemaProps) (*crdSchema, error) {
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1, &internal, nil); err != nil {
		return nil, err
	}
	st, err := structuralschema.NewStructural(&internal)
	if err != nil {
		return nil, err
	}
	val, _, err := validation.NewSchemaValidator(&internal)
	if err != nil {
		return nil, err
	}
	return &crdSchema{structural: st, validator: val, cel: cel.NewValidator(st, true, celconfig.PerCallLimit)}, nil
}

// check returns what an API server would refuse in obj: schema errors,
// fields the schema does not know, failed CEL rules, a bad name.
func (s *crdSchema) check(obj map[string]any) []string {
	obj = runtime.DeepCopyJSON(obj)
	defaulting.Default(obj, s.structural)
	var problems []string
	for _, e := range validation.ValidateCustomResource(nil, obj, s.validator) {
		problems = append(problems, e.Error())
	}
	pruned := runtime.DeepCopyJSON(obj)
	for _, p := range pruning.PruneWithOptions(pruned, s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		problems = append(problems, "unknown field "+p)
	}
	errs, _ := s.cel.Validate(context.Background(), nil, s.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	for _, e := range errs {
		problems = append(problems, e.Error())
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		name, _ := md["name"].(string)
		for _, msg := range utilvalidation.IsDNS1123Subdomain(name) {
			problems = append(problems, fmt.Sprintf("metadata.name %q: %s", name, msg))
		}
	}
	return problems
}
