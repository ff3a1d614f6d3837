package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompareShape checks the shape comparison that TestDocumentedExamples
// applies, on outputs that must and must not pass.
func TestCompareShape(t *testing.T) {
	tests := []struct {
		name, want, got string
		ok              bool
	}{
		{"same keys, other values", `{"a": 1, "b": "x", "c": [1, 2]}`, `{"b":"yy","a":2.5,"c":[3]}`, true},
		{"missing key", `{"a": 1, "b": 2}`, `{"a": 1}`, false},
		{"undocumented key", `{"a": 1}`, `{"a": 1, "b": 2}`, false},
		{"type changed", `{"a": 1}`, `{"a": "1"}`, false},
		{"null is its own type", `{"a": null}`, `{"a": 0}`, false},
		{"nested", `[{"m": [{"x": true}]}]`, `[{"m": [{"x": false}, {"x": true}]}, {"m": [{"x": true}]}]`, true},
		{"nested change", `[{"m": [{"x": true}]}]`, `[{"m": [{"x": 1}]}]`, false},
		{"two element shapes", `[{"a": 1}, {"b": 1}]`, `[{"b": 2}, {"a": 2}, {"a": 3}]`, true},
		{"a documented shape missing", `[{"a": 1}, {"b": 1}]`, `[{"a": 2}]`, false},
		{"empty array", `{"l": []}`, `{"l": [1]}`, false},
		{"not JSON", `{"a": 1}`, `a: 1`, false},
		{"json lines", "{\"t\": {\"id\": 1}}\n{\"t\": null, \"u\": 3}\n", "{\"t\": {\"id\": 7}}\n{\"t\": {\"id\": 8}}\n{\"t\": null, \"u\": 1}", true},
		{"json lines, new shape", "{\"t\": 1}\n", "{\"t\": 1}\n{\"e\": \"x\"}\n", false},
		{"events", "data: {\"a\": 1}\n\ndata: [DONE]\n", "data: {\"a\": 5}\n\ndata: {\"a\": 6}\n\ndata: [DONE]\n\n", true},
		{"events without DONE", "data: {\"a\": 1}\n\ndata: [DONE]\n", "data: {\"a\": 5}\n", false},
		{"table", "NAME   STATUS   URL\nchat   Healthy  /a/chat\n", "NAME STATUS URL\nchat READY /b/chat", true},
		{"table header changed", "NAME   STATUS   URL\nchat   Healthy  /a/chat\n", "NAME URL STATUS\nchat /b/chat READY", false},
		{"table rows", "NAME   STATUS   URL\nchat   Healthy  /a/chat\n", "NAME STATUS URL\na x /a\nb y /b", false},
		{"labels", "Name:      langid\nBatch size:   8\n", "Name: langid\nBatch size: 16\n", true},
		{"label changed", "Name:      langid\nBatch size:   8\n", "Name: langid\nBatch: 16\n", false},
		{"words after a label", "Max batch delay:  20 ms\n", "Max batch delay: 20\n", false},
		{"one line", `Model "ld2" registered.`, `Model "x" registered.`, true},
		{"nothing documented", "", "anything", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := compareShape(tt.want, tt.got)
			if (err == nil) != tt.ok {
				t.Errorf("compareShape = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

func TestParseExamples(t *testing.T) {
	md := "# Title\n\n" +
		"<!-- example -->\n```console\n$ curl -s localhost:8080/ping \\\n    -H 'A: b'\n{\"a\": 1}\n\n$ bin/switchyard models\nNAME\n```\n\n" +
		"<!-- example status=202 exit=0 -->\n\n```sh\n# a comment\ncurl -s -X POST localhost:8084/models\n\ncurl -s localhost:8080/ping\n```\n\n" +
		"<!-- example skip: needs Docker -->\n```sh\ncurl -s localhost:8080/invocations\n```\n\n" +
		"<!-- example -->\nsome text breaks the marker\n```sh\ncurl -s localhost:8080/ping\n```\n\n" +
		"```json\n{\"not\": \"a command\"}\n```\n"
	path := filepath.Join(t.TempDir(), "doc.md")
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	examples, unmarked, err := parseExamples(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) != 3 || len(unmarked) != 1 || !strings.HasSuffix(unmarked[0], "doc.md:29") {
		t.Fatalf("examples %+v, unmarked %q", examples, unmarked)
	}
	first := examples[0].commands
	if len(first) != 2 || first[0].text != "curl -s localhost:8080/ping \\\n    -H 'A: b'" ||
		first[0].output != "{\"a\": 1}\n\n" || first[1].output != "NAME\n" || first[1].line != 9 {
		t.Errorf("console block read as %+v", first)
	}
	second := examples[1]
	if second.status != 202 || len(second.commands) != 2 || second.commands[0].output != "" {
		t.Errorf("script block read as %+v", second)
	}
	if examples[2].skip != "needs Docker" {
		t.Errorf("skip read as %q", examples[2].skip)
	}
	for _, bad := range []string{"<!-- example status=x -->", "<!-- example nope -->", "<!-- example skip: -->", "<!-- example -->"} {
		if err := os.WriteFile(path, []byte(bad+"\n```sh\ncurl x\n```\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if bad == "<!-- example -->" {
			if err := os.WriteFile(path, []byte(bad+"\n```sh\n# nothing\n```\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if _, _, err := parseExamples(path); err == nil {
			t.Errorf("marker %q accepted", bad)
		}
	}
}

func TestInQuote(t *testing.T) {
	for cmd, want := range map[string]bool{
		`curl -d '{`:                  true,
		`curl -d '{"a": 1}'`:          false,
		`curl -d "it's"`:              false,
		`curl -d 'say "hi`:            true,
		`curl -H "X: \"" -d x`:        false,
		`echo it\'s`:                  false,
		"curl -d '{\n  \"a\": 1}' -s": false,
	} {
		if got := inQuote(cmd); got != want {
			t.Errorf("inQuote(%q) = %v, want %v", cmd, got, want)
		}
	}
}

func TestErrorCode(t *testing.T) {
	for body, want := range map[string]int{
		`{"code": 404, "type": "ModelNotFoundException", "message": "x"}`: 404,
		`{"code": 404}`:             0,
		`[{"label": "fra"}]`:        0,
		"NAME STATUS":               0,
		`{"status": "Healthy"}`:     0,
		`{"code": 424, "type": ""}`: 424,
	} {
		if got := errorCode(body); got != want {
			t.Errorf("errorCode(%s) = %d, want %d", body, got, want)
		}
	}
}
