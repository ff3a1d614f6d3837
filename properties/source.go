package properties

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	mprops "github.com/magiconair/properties"
)

// setting is one raw value and where it was written.
type setting struct {
	value string
	at    origin
}

// settings is the raw key/value view of one configuration: the file's
// values with the environment's on top.
type settings struct {
	file string // absolute path of the properties file; "" when none
	vals map[string]setting
}

// readSettings reads the properties file at path: a regular file of at
// most MaxFileSize bytes (see ReadRegularFile). A missing file is an empty
// configuration when optional is set, and an error otherwise; a symbolic
// link to nothing is an error either way.
func readSettings(path string, optional bool) (*settings, error) {
	data, err := ReadRegularFile(path, MaxFileSize)
	if optional && errors.Is(err, fs.ErrNotExist) && !exists(path) {
		return &settings{file: path, vals: map[string]setting{}}, nil
	}
	if err != nil {
		return nil, err
	}
	return parseSettings(path, data)
}

// exists reports whether there is anything at path, a broken link included.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// parseSettings parses data, the content of file.
func parseSettings(file string, data []byte) (*settings, error) {
	text := normalize(data)
	entries, err := scanEntries(file, text)
	if err != nil {
		return nil, err
	}
	loader := &mprops.Loader{Encoding: mprops.UTF8, DisableExpansion: true}
	p, err := loader.LoadBytes([]byte(text))
	if err != nil {
		return nil, origin{file: file}.errorf("", ErrSyntax, "%v", err)
	}
	lines := make(map[string]int, len(entries))
	for _, e := range entries {
		lines[e.key] = e.line
	}
	s := &settings{file: file, vals: make(map[string]setting, p.Len())}
	for _, k := range p.Keys() {
		v, _ := p.Get(k)
		s.vals[k] = setting{value: v, at: origin{file: file, line: lines[k]}}
	}
	return s, nil
}

// get returns the value of key and whether it is set.
func (s *settings) get(key string) (setting, bool) {
	v, ok := s.vals[key]
	return v, ok
}

// setEnv stores a value that came from the environment variable name.
func (s *settings) setEnv(key, name, value string) {
	s.vals[key] = setting{value: value, at: origin{env: name}}
}

// keys returns the keys in sorted order.
func (s *settings) keys() []string {
	keys := make([]string, 0, len(s.vals))
	for k := range s.vals {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// origins returns where each key was written.
func (s *settings) origins() map[string]origin {
	at := make(map[string]origin, len(s.vals))
	for k, v := range s.vals {
		at[k] = v.at
	}
	return at
}

// applyOptionEnv sets option.<name> from each OPTION_<NAME> variable for
// the options the file does not set.
func (s *settings) applyOptionEnv(env Env) {
	var known []string
	for k := range s.vals {
		if name, ok := strings.CutPrefix(k, optionPrefix); ok {
			known = append(known, name)
		}
	}
	for _, name := range env.sortedKeys() {
		rest, ok := strings.CutPrefix(name, optionEnvPrefix)
		if !ok || rest == "" {
			continue
		}
		key := optionKey(rest, known)
		if _, set := s.vals[key]; !set {
			s.setEnv(key, name, env[name])
		}
	}
}

// applyServingEnv lets SERVING_<KEY> replace the value of each key in
// keys and each key the file sets.
func (s *settings) applyServingEnv(env Env, keys []string) {
	for _, key := range slices.Concat(keys, s.keys()) {
		name := ServingEnvName(key)
		if v, ok := env.Lookup(name); ok {
			s.setEnv(key, name, v)
		}
	}
}

// field is one typed key: how to parse a raw value into its struct field,
// and how to write the field back as a raw value (false when unset).
type field struct {
	key string
	set func(raw string) error
	get func() (string, bool)
}

// decode parses every set key of fields into its struct field. Values are
// trimmed of surrounding white space first.
func (s *settings) decode(fields []field) error {
	for _, f := range fields {
		v, ok := s.get(f.key)
		if !ok {
			continue
		}
		if err := f.set(strings.TrimSpace(v.value)); err != nil {
			return v.at.errorf(f.key, ErrInvalid, "%v", err)
		}
	}
	return nil
}

// absPath makes p absolute against base unless it already is.
func absPath(base, p string) string {
	switch {
	case p == "":
		return ""
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}
