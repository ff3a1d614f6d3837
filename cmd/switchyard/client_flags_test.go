package main

import (
	"flag"
	"io"
	"reflect"
	"testing"
)

func TestParseInterleaved(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		pos   []string
		label string
		json  bool
	}{
		{"flags first", []string{"--name", "x", "--json", "a"}, []string{"a"}, "x", true},
		{"flags last", []string{"a", "--name", "x", "--json"}, []string{"a"}, "x", true},
		{"flags between", []string{"a", "--name=x", "b", "-json", "c"}, []string{"a", "b", "c"}, "x", true},
		{"dashes end the flags", []string{"a", "--", "--json", "-x"}, []string{"a", "--json", "-x"}, "", false},
		{"dashes as a value", []string{"--name", "--", "a", "--json"}, []string{"a"}, "--", true},
		{"dashes after a value", []string{"--name", "--", "--", "--json"}, []string{"--json"}, "--", false},
		{"dashes after a bool", []string{"--json", "--", "--name"}, []string{"--name"}, "", true},
		{"single dash is positional", []string{"-", "--json"}, []string{"-"}, "", true},
		{"nothing", nil, nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			label := fs.String("name", "", "")
			js := fs.Bool("json", false, "")
			pos, err := parseInterleaved(fs, tt.args, io.Discard, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(pos, tt.pos) || *label != tt.label || *js != tt.json {
				t.Errorf("got %q name=%q json=%v, want %q name=%q json=%v", pos, *label, *js, tt.pos, tt.label, tt.json)
			}
		})
	}
}

func TestParseHeader(t *testing.T) {
	tests := []struct {
		in         string
		key, value string
		ok         bool
	}{
		{"X-A: 1", "X-A", "1", true},
		{"X-A:1", "X-A", "1", true},
		{" X-A :\t a: b \t", "X-A", "a: b", true},
		{"X-Empty:", "X-Empty", "", true},
		{"X-Obs: caf\xc3\xa9", "X-Obs", "caf\xc3\xa9", true},
		{"no colon", "", "", false},
		{": value", "", "", false},
		{"X A: 1", "", "", false},
		{"X(A): 1", "", "", false},
		{"X-A: a\r\nX-B: b", "", "", false},
		{"X-A: a\x00", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			key, value, err := parseHeader(tt.in)
			if (err == nil) != tt.ok || key != tt.key || value != tt.value {
				t.Errorf("parseHeader(%q) = %q, %q, %v; want %q, %q, ok=%v", tt.in, key, value, err, tt.key, tt.value, tt.ok)
			}
		})
	}
}

func TestOptCount(t *testing.T) {
	tests := []struct {
		in   string
		want string
		ok   bool
	}{
		{"0", "0", true},
		{"16", "16", true},
		{"007", "7", true},
		{"-1", "", false},
		{"1.5", "", false},
		{"", "", false},
		{"99999999999999999999", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			var o optCount
			err := o.Set(tt.in)
			if (err == nil) != tt.ok || o.String() != tt.want || o.set != tt.ok {
				t.Errorf("Set(%q): %v, value %q, set %v; want %q, ok=%v", tt.in, err, o.String(), o.set, tt.want, tt.ok)
			}
		})
	}
}
