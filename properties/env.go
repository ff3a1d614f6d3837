package properties

import (
	"os"
	"slices"
	"strings"
)

// Env is the set of environment variables that may override settings. The
// loaders walk it to find every OPTION_* variable, which a lookup function
// could not list. A nil Env has no variables.
type Env map[string]string

// OSEnv returns a snapshot of the process environment.
func OSEnv() Env {
	env := Env{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = v
		}
	}
	return env
}

// Lookup returns the value of the variable key and whether it is set.
func (e Env) Lookup(key string) (string, bool) {
	v, ok := e[key]
	return v, ok
}

// sortedKeys returns the variable names in order, so that overrides are
// applied deterministically.
func (e Env) sortedKeys() []string {
	keys := make([]string, 0, len(e))
	for k := range e {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

const (
	optionEnvPrefix  = "OPTION_"
	servingEnvPrefix = "SERVING_"
	optionPrefix     = "option."
)

// camelOptions are option names spelled in camelCase, which an OPTION_*
// variable cannot spell.
var camelOptions = []string{"entryPoint", "pythonExecutable"}

// optionKey maps the variable OPTION_<NAME> to its option key: the known
// option that matches NAME ignoring case, else option.<name in lower case>.
// known holds the option names (prefix stripped) the file already sets.
func optionKey(name string, known []string) string {
	for _, k := range slices.Concat(camelOptions, known) {
		if strings.EqualFold(k, name) {
			return optionPrefix + k
		}
	}
	return optionPrefix + strings.ToLower(name)
}

// ServingEnvName returns the variable that overrides the server key:
// SERVING_ and the key in upper case with dots and dashes as underscores
// (max_request_size: SERVING_MAX_REQUEST_SIZE).
func ServingEnvName(key string) string {
	up := strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(key))
	return servingEnvPrefix + up
}
