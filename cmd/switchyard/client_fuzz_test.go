package main

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzParseAPIError(f *testing.F) {
	f.Add(404, []byte(`{"code": 404, "type": "ModelNotFoundException", "message": "model not found: x"}`))
	f.Add(502, []byte("<html>\n<h1>Bad Gateway</h1>\n</html>"))
	f.Add(500, []byte(`{"error": "bad"}`))
	f.Add(599, []byte("a\xffb\x1b[0m"))
	f.Add(400, []byte(`{"type": 1, "message": ["x"]}`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		status = 400 + (status%200+200)%200
		e := parseAPIError(status, body)
		msg := e.Error()
		if !strings.HasPrefix(msg, strconv.Itoa(status)+" "+e.Type) || e.Type == "" {
			t.Errorf("%q does not start with the status and a type", msg)
		}
		if !utf8.ValidString(e.Message) {
			t.Errorf("message %q is not valid UTF-8", e.Message)
		}
		var fields map[string]any
		if json.Unmarshal(body, &fields) != nil && strings.ContainsAny(e.Message, "\n\r\t\x1b") {
			t.Errorf("text message %q is not on one line", e.Message)
		}
	})
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{"X-A: 1", " X-A :\t a: b ", "no colon", "X A: 1", "X-A: a\r\nX-B: b", "K:\x80\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		key, value, err := parseHeader(s)
		if err != nil {
			return
		}
		if !isToken(key) || strings.ContainsAny(value, "\r\n\x00") || strings.Trim(value, " \t") != value {
			t.Fatalf("parseHeader(%q) = %q, %q", s, key, value)
		}
		k2, v2, err := parseHeader(key + ": " + value)
		if err != nil || k2 != key || v2 != value {
			t.Errorf("%q: %q, %q did not read back: %q, %q, %v", s, key, value, k2, v2, err)
		}
	})
}

func FuzzPrintDescribe(f *testing.F) {
	f.Add([]byte(describeBody))
	f.Add([]byte(minimalBody))
	f.Add([]byte(`[{"models": [{"workerGroups": [{"workers": [{"gpuMemoryMiB": null}]}]}]}]`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var out bytes.Buffer
		err := printDescribe(&out, body)
		if err == nil && !strings.HasPrefix(out.String(), "Name:") {
			t.Errorf("printed %q without error", out.String())
		}
		if err != nil && out.Len() > 0 {
			t.Errorf("error %v after printing %q", err, out.String())
		}
	})
}
