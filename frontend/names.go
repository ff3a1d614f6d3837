package frontend

import (
	"slices"
	"strings"

	"github.com/switchyard/switchyard/api"
)

const maxModelName = 64

// validModelName reports whether name is 1 to 64 ASCII letters, digits,
// '-', '_' or '.', and is not "." or "..".
func validModelName[T string | []byte](name T) bool {
	if len(name) == 0 || len(name) > maxModelName {
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

// checkModelName returns a 400 error naming the rule when name is invalid.
func checkModelName(name string) error {
	if validModelName(name) {
		return nil
	}
	return badRequestf("Invalid model name %s: use 1 to %d letters, digits, '-', '_' or '.'.", api.Quote(name), maxModelName)
}

// archiveSuffix is what SageMaker multi-model endpoints add to model names.
const archiveSuffix = ".tar.gz"

// trimArchive strips the ".tar.gz" suffix SageMaker puts on model names.
func trimArchive(name string) string { return strings.TrimSuffix(name, archiveSuffix) }

// archiveTarget is the model a target-model header names: the header as it
// is when a model of that very name is registered (a name may end in
// ".tar.gz"), else the header without the ".tar.gz" SageMaker adds.
func (s *Server) archiveTarget(header string) string {
	name, ok := strings.CutSuffix(header, archiveSuffix)
	if !ok {
		return header
	}
	if _, found := slices.BinarySearch(s.models.Names(), header); found {
		return header
	}
	return name
}
