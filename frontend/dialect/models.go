package dialect

import (
	"strings"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/message"
)

// MaxModelName is the longest model name.
const MaxModelName = 64

// ValidModelName reports whether name is 1 to 64 ASCII letters, digits,
// '-', '_' or '.', and is not "." or "..".
func ValidModelName[T string | []byte](name T) bool {
	if len(name) == 0 || len(name) > MaxModelName {
		return false
	}
	if string(name) == "." || string(name) == ".." {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !nameChar(name[i]) {
			return false
		}
	}
	return true
}

func nameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '_' || c == '.'
}

// CheckModelName returns a 400 error naming the rule when name is invalid.
func CheckModelName(name string) error {
	if ValidModelName(name) {
		return nil
	}
	return BadRequestf("Invalid model name %s: use 1 to %d letters, digits, '-', '_' or '.'.", api.Quote(name), MaxModelName)
}

// archiveSuffix is what SageMaker multi-model endpoints add to model names.
const archiveSuffix = ".tar.gz"

// TrimArchive strips the ".tar.gz" suffix SageMaker puts on model names.
func TrimArchive(name string) string { return strings.TrimSuffix(name, archiveSuffix) }

// Headers that name a request's model by SageMaker's rule.
const (
	HeaderSageMakerTarget = "x-amzn-sagemaker-target-model"
	HeaderTarget          = "x-target-model"
	headerModelName       = "model_name"
)

// TargetModel picks a request's model by /invocations' rule: the SageMaker
// target-model headers, query model_name, header model_name, and finally
// the only registered model.
func TargetModel(req Request, models Catalog) (string, error) {
	for _, v := range [...]string{req.Header(HeaderSageMakerTarget), req.Header(HeaderTarget)} {
		if v != "" {
			name := archiveTarget(v, models)
			return name, CheckModelName(name)
		}
	}
	if v := req.Ctx.QueryArgs().Peek(headerModelName); len(v) > 0 {
		return string(v), CheckModelName(string(v))
	}
	if v := req.Header(headerModelName); v != "" {
		return v, CheckModelName(v)
	}
	if names := models.Names(); len(names) == 1 {
		return names[0], nil
	}
	return "", BadRequest("Parameter model_name is required.")
}

// archiveTarget is the model a target-model header names: the header as it
// is when a model of that very name is registered (a name may end in
// ".tar.gz"), else the header without the ".tar.gz" SageMaker adds.
func archiveTarget(header string, models Catalog) string {
	name, ok := strings.CutSuffix(header, archiveSuffix)
	if !ok || HasModel(models, header) {
		return header
	}
	return name
}

// PropAdapter is the worker property that names the LoRA adapter a request
// runs with.
const PropAdapter = "adapter"

// AsAdapter reports whether name is a LoRA adapter rather than a model
// (adapter names are unique across the server, as vLLM's are); if it is,
// it names the adapter in in's properties and returns the adapter's model.
func AsAdapter(models Catalog, name string, in *message.Input) (string, bool) {
	base, ok := models.AdapterModel(name)
	if ok {
		in.Props = append(in.Props, message.Prop{Key: PropAdapter, Value: name})
	}
	return base, ok
}

// ServesAdapters reports whether model serves LoRA adapters: a name meant
// for one of its adapters must then never fall back to the model itself.
func ServesAdapters(models Catalog, model string) bool {
	_, err := models.Adapters(model)
	return err == nil
}
