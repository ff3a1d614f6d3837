package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestOutputContract checks what docs/usage.md promises about the client's
// output: models prints a NAME STATUS URL table, describe "Label: value"
// lines, register, scale and unregister one line; and with --json every
// one of them prints JSON.
func TestOutputContract(t *testing.T) {
	jsonReply := func(body string) reply {
		return reply{status: 200, body: body, header: map[string]string{"Content-Type": "application/json"}}
	}
	list := jsonReply(`{"models": [{"modelName": "a", "modelUrl": "/s/a", "status": "READY"}, {"modelName": "b", "modelUrl": "/s/b", "status": "PENDING"}]}`)
	tests := []struct {
		args  []string
		reply reply
		check func(stdout string) bool
	}{
		{[]string{"models"}, list, func(out string) bool {
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			return len(lines) == 3 && strings.Join(strings.Fields(lines[0]), " ") == "NAME STATUS URL"
		}},
		{[]string{"describe", "a"}, jsonReply(minimalBody), func(out string) bool {
			return strings.HasPrefix(out, "Name:") && strings.Contains(out, "\nStatus:")
		}},
		{[]string{"register", "a"}, jsonReply(`{"status": "Model \"a\" registered."}`), isOneLine},
		{[]string{"scale", "a", "--max", "2"}, jsonReply(`{"status": "Model \"a\" worker scaled."}`), isOneLine},
		{[]string{"unregister", "a"}, jsonReply(`{"status": "Model \"a\" unregistered"}`), isOneLine},
	}
	for _, tt := range tests {
		for _, asJSON := range []bool{false, true} {
			args := tt.args
			if asJSON {
				args = append(append([]string{}, args...), "--json")
			}
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				f := newFakeAPI(t, tt.reply)
				code, stdout, stderr := cli(t, append(args, "--url", f.URL)...)
				ok := tt.check(stdout)
				if asJSON {
					ok = json.Valid([]byte(stdout))
				}
				if code != exitOK || stderr != "" || !ok {
					t.Errorf("exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
				}
			})
		}
	}
}

// isOneLine reports whether out is exactly one line.
func isOneLine(out string) bool {
	return strings.Count(out, "\n") == 1 && strings.HasSuffix(out, "\n") && len(out) > 1
}
