package main

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// optCount is a flag holding a non-negative integer that remembers whether
// it was given, so that only given values are sent to the server.
type optCount struct {
	n   int
	set bool
}

// String returns the value, or "" when the flag was not given.
func (o *optCount) String() string {
	if o == nil || !o.set {
		return ""
	}
	return strconv.Itoa(o.n)
}

// Set parses a non-negative decimal integer.
func (o *optCount) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return errors.New("not a non-negative integer")
	}
	o.n, o.set = n, true
	return nil
}

// countParam ties a count flag to the API parameter it sets.
type countParam struct {
	flag, param, usage string
}

// addCounts declares one optCount flag per parameter on fs.
func addCounts(fs *flag.FlagSet, params []countParam) map[string]*optCount {
	vals := make(map[string]*optCount, len(params))
	for _, p := range params {
		v := &optCount{}
		fs.Var(v, p.flag, p.usage)
		vals[p.param] = v
	}
	return vals
}

// setCounts adds the given counts to q under their parameter names and
// reports how many there were.
func setCounts(q url.Values, vals map[string]*optCount) int {
	n := 0
	for param, v := range vals {
		if v.set {
			q.Set(param, strconv.Itoa(v.n))
			n++
		}
	}
	return n
}

// headerField is one header given on the command line.
type headerField struct {
	key, value string
}

// headerList is a repeatable "Key: Value" flag.
type headerList []headerField

// String returns the headers as given, for -h.
func (h *headerList) String() string {
	if h == nil {
		return ""
	}
	parts := make([]string, len(*h))
	for i, f := range *h {
		parts[i] = f.key + ": " + f.value
	}
	return strings.Join(parts, ", ")
}

// Set adds one "Key: Value" header.
func (h *headerList) Set(s string) error {
	key, value, err := parseHeader(s)
	if err != nil {
		return err
	}
	*h = append(*h, headerField{key, value})
	return nil
}

// parseHeader splits "Key: Value" at the first colon. The key must be an
// HTTP token; spaces and tabs around the value are dropped, and the value
// may hold no control character other than tab.
func parseHeader(s string) (key, value string, err error) {
	key, value, ok := strings.Cut(s, ":")
	if !ok {
		return "", "", fmt.Errorf("header %q is not Key: Value", s)
	}
	key = strings.Trim(key, " \t")
	if !isToken(key) {
		return "", "", fmt.Errorf("header name %q is not valid in HTTP", key)
	}
	value = strings.Trim(value, " \t")
	for _, c := range []byte(value) {
		if c < ' ' && c != '\t' || c == 0x7f {
			return "", "", fmt.Errorf("header %s: value has a control character", key)
		}
	}
	return key, value, nil
}

// isToken reports whether s is a non-empty HTTP token (RFC 9110 tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !isTokenChar(c) {
			return false
		}
	}
	return true
}

// isTokenChar reports whether c may appear in an HTTP token.
func isTokenChar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	default:
		return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
	}
}
