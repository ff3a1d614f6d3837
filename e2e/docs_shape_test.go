package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// The shape of an output is what the docs promise about it, and values are
// not: JSON is compared by its keys and the types of its values, JSON
// lines and server-sent events line by line as sets of such shapes, and
// text (the client's tables) by its number of lines, its table headers,
// its "Label:" prefixes and the number of words after them.

// compareShape returns nil when got has the shape of the documented want.
func compareShape(want, got string) error {
	want, got = strings.TrimSpace(want), strings.TrimSpace(got)
	switch {
	case want == "":
		return nil
	case json.Valid([]byte(want)):
		return compareJSONText(want, got)
	case isLines(want):
		return compareLines(want, got)
	}
	return compareText(want, got)
}

// compareJSONText compares two JSON documents by shape.
func compareJSONText(want, got string) error {
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		return fmt.Errorf("the output is not JSON (%v): %.300s", err, got)
	}
	return compareJSON("$", w, g)
}

// compareJSON compares the values at path: objects must have the same
// keys, arrays the same set of element shapes, others the same type.
func compareJSON(path string, want, got any) error {
	if kindOf(want) != kindOf(got) {
		return fmt.Errorf("%s: documented %s, got %s", path, kindOf(want), kindOf(got))
	}
	switch w := want.(type) {
	case map[string]any:
		return compareObjects(path, w, got.(map[string]any))
	case []any:
		return compareArrays(path, w, got.([]any))
	}
	return nil
}

func compareObjects(path string, want, got map[string]any) error {
	var missing, extra []string
	for k := range want {
		if _, ok := got[k]; !ok {
			missing = append(missing, k)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			extra = append(extra, k)
		}
	}
	if len(missing) > 0 || len(extra) > 0 {
		sort.Strings(missing)
		sort.Strings(extra)
		return fmt.Errorf("%s: keys documented but missing %q, present but undocumented %q", path, missing, extra)
	}
	for _, k := range sortedKeys(want) {
		if err := compareJSON(path+"."+k, want[k], got[k]); err != nil {
			return err
		}
	}
	return nil
}

// compareArrays wants every element of got to have the shape of a
// documented element, and every documented shape to occur.
func compareArrays(path string, want, got []any) error {
	if len(want) == 0 || len(got) == 0 {
		if len(want) != len(got) {
			return fmt.Errorf("%s: documented %d elements, got %d", path, len(want), len(got))
		}
		return nil
	}
	shapes := map[string]bool{}
	for _, w := range want {
		shapes[shapeOf(w)] = true
	}
	seen := map[string]bool{}
	for i, g := range got {
		s := shapeOf(g)
		if !shapes[s] {
			return compareJSON(fmt.Sprintf("%s[%d]", path, i), closest(want, g), g)
		}
		seen[s] = true
	}
	for _, w := range want {
		if !seen[shapeOf(w)] {
			return fmt.Errorf("%s: no element has the documented shape %s", path, shapeOf(w))
		}
	}
	return nil
}

// closest returns the documented element to explain a mismatch with: the
// first one of the same kind.
func closest(want []any, got any) any {
	for _, w := range want {
		if kindOf(w) == kindOf(got) {
			return w
		}
	}
	return want[0]
}

// shapeOf returns a canonical text of v's shape.
func shapeOf(v any) string {
	switch x := v.(type) {
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			parts = append(parts, k+":"+shapeOf(x[k]))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case []any:
		var elems []string
		for _, e := range x {
			if s := shapeOf(e); !slices.Contains(elems, s) {
				elems = append(elems, s)
			}
		}
		sort.Strings(elems)
		return "[" + strings.Join(elems, "|") + "]"
	}
	return kindOf(v)
}

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// isLines reports whether every non-blank line of s is JSON, possibly as
// a server-sent event ("data: ...").
func isLines(s string) bool {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && lineShape(l) == "" {
			return false
		}
	}
	return true
}

// lineShape is the shape of one JSON line or event; "" when it is neither.
func lineShape(l string) string {
	prefix := ""
	if rest, ok := strings.CutPrefix(l, "data: "); ok {
		prefix, l = "data: ", rest
	}
	if prefix != "" && l == "[DONE]" {
		return "data: [DONE]"
	}
	var v any
	if json.Unmarshal([]byte(l), &v) != nil {
		return ""
	}
	return prefix + shapeOf(v)
}

// compareLines compares JSON lines or events as sets of line shapes.
func compareLines(want, got string) error {
	wantShapes := map[string]string{} // shape -> a documented line
	for _, l := range strings.Split(want, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			wantShapes[lineShape(l)] = l
		}
	}
	seen := map[string]bool{}
	for i, l := range strings.Split(got, "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		s := lineShape(l)
		if _, ok := wantShapes[s]; !ok {
			return fmt.Errorf("line %d has no documented shape: %.300s", i+1, l)
		}
		seen[s] = true
	}
	for s, l := range wantShapes {
		if !seen[s] {
			return fmt.Errorf("no line has the shape of the documented %.300s", l)
		}
	}
	return nil
}

// compareText compares the client's text output: the same number of
// lines; table headers word for word; a "Label:" prefix exactly, then the
// same number of words; other lines the same number of words.
func compareText(want, got string) error {
	wl, gl := textLines(want), textLines(got)
	if len(wl) != len(gl) {
		return fmt.Errorf("documented %d lines, got %d:\n%s", len(wl), len(gl), got)
	}
	for i := range wl {
		if err := compareLine(wl[i], gl[i]); err != nil {
			return fmt.Errorf("line %d: %w (documented %q, got %q)", i+1, err, wl[i], gl[i])
		}
	}
	return nil
}

func textLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		out = append(out, strings.TrimRight(l, " \t\r"))
	}
	return out
}

var headerWord = regexp.MustCompile(`^[A-Z][A-Z0-9()/_-]*$`)

func compareLine(want, got string) error {
	wf, gf := strings.Fields(want), strings.Fields(got)
	if len(wf) >= 2 && allMatch(wf, headerWord) {
		if !slices.Equal(wf, gf) {
			return fmt.Errorf("table header differs")
		}
		return nil
	}
	wLabel, wRest := splitLabel(want)
	gLabel, gRest := splitLabel(got)
	if wLabel != gLabel {
		return fmt.Errorf("label differs")
	}
	if len(strings.Fields(wRest)) != len(strings.Fields(gRest)) {
		return fmt.Errorf("number of words differs")
	}
	return nil
}

// splitLabel cuts "Label words: rest" after the first colon that ends a
// word; the label's spaces are normalized.
func splitLabel(l string) (label, rest string) {
	for i := 0; i < len(l); i++ {
		if l[i] == ':' && (i+1 == len(l) || l[i+1] == ' ' || l[i+1] == '\t') {
			return strings.Join(strings.Fields(l[:i+1]), " "), l[i+1:]
		}
	}
	return "", l
}

func allMatch(words []string, re *regexp.Regexp) bool {
	for _, w := range words {
		if !re.MatchString(w) {
			return false
		}
	}
	return true
}

// errorCode returns the code of a documented error body, or 0.
func errorCode(output string) int {
	var p struct {
		Code *int    `json:"code"`
		Type *string `json:"type"`
	}
	if json.Unmarshal(bytes.TrimSpace([]byte(output)), &p) != nil || p.Code == nil || p.Type == nil {
		return 0
	}
	return *p.Code
}
