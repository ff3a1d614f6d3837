package main

import (
	"strings"
	"testing"
)

func FuzzParseStat(f *testing.F) {
	f.Add([]byte("42 (switchyard) S 1 42 42 0 -1 4194560 100 0 0 0 150 25 0 0 20 0 9 0 100 1000 200"))
	f.Add([]byte("7 (a b) (c)) R 1 7 7 0 -1 0 0 0 0 0 3 4 0"))
	f.Add([]byte(")"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := parseStat(b)
		if err == nil && n < 0 {
			t.Errorf("parseStat(%q) = %d: negative CPU time", b, n)
		}
	})
}

func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{"A: b", "X-Target-Model: langid.tar.gz", ":", "a:b:c", "A: b\r\nC: d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := parseHeader(s)
		if err != nil {
			return
		}
		if h.name == "" || strings.ContainsAny(h.name, " \t\r\n") || strings.ContainsAny(h.value, "\r\n") {
			t.Errorf("parseHeader(%q) accepted %+v", s, h)
		}
	})
}

func FuzzParseLevels(f *testing.F) {
	for _, s := range []string{"1,8,64", "1", "", "0", "4097", " 3 ,4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		levels, err := parseLevels(s)
		if err != nil {
			return
		}
		for _, n := range levels {
			if n < 1 || n > 4096 {
				t.Errorf("parseLevels(%q) accepted %d", s, n)
			}
		}
	})
}

func FuzzReadResults(f *testing.F) {
	f.Add(`{"label":"bare","concurrency":1,"rps":5,"cpu_us_per_req":{"server":1}}` + "\n")
	f.Add("\n{}\n")
	f.Add("{")
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := readResults(strings.NewReader(s))
		if err != nil && rs != nil {
			t.Errorf("readResults returned results with error %v", err)
		}
	})
}
