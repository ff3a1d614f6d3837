package properties

import (
	"errors"
	"reflect"
	"testing"

	mprops "github.com/magiconair/properties"
)

func TestScanEntries(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []entry
	}{
		{"empty", "", nil},
		{"separators", "a=1\nb:2\nc 3\nd\t=\t4\ne", []entry{{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4}, {"e", 5}}},
		{"comments and blanks", "# x\n! y\n\n   \n  k = v\n", []entry{{"k", 5}}},
		{"continuation", "a=1 \\\n  2 \\\n  3\nb=4\n", []entry{{"a", 1}, {"b", 4}}},
		{"escaped separator in key", "a\\=b\\ c=1\n", []entry{{"a=b c", 1}}},
		{"unicode key", "caf\\u00E9=1\n", []entry{{"café", 1}}},
		{"escaped newline in key", "a\\\nb=1\nc=2", []entry{{"a\nb", 1}, {"c", 3}}},
		{"comment char in value", "a=#1\n", []entry{{"a", 1}}},
		{"duplicate", "a=1\na=2\n", []entry{{"a", 1}, {"a", 2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := scanEntries("f", tt.text)
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("scanEntries = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestScanEntriesErrors(t *testing.T) {
	tests := []struct {
		name, text, key string
		line            int
	}{
		{"no key", "a=1\n=2\n", "", 2},
		{"colon, no key", "a=1\n\n  : 2\n", "", 3},
		{"short unicode in value", "a=1\nb=\\u12\n", "b", 3},
		{"bad unicode in value", "a=\\u12x4\n", "a", 1},
		{"bad unicode in key", "x=1\nk\\uzz=1\n", "", 2},
		{"backslash at end of value", "a=1\nb=2\\", "b", 2},
		{"backslash at end of key", "a=1\nb\\", "", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := scanEntries("f", tt.text)
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrSyntax) || e.Line != tt.line || e.Key != tt.key || e.File != "f" {
				t.Errorf("error %#v, want ErrSyntax at f:%d key %q", err, tt.line, tt.key)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	got := normalize([]byte("\xef\xbb\xbfa=1\r\nb=2\rc=3\n"))
	if got != "a=1\nb=2\nc=3\n" {
		t.Errorf("normalize = %q", got)
	}
}

// FuzzScanEntries checks that the scanner agrees with magiconair: both
// accept the same texts and find the same keys. magiconair is not run on a
// text with an entry without a key, which makes its lexer goroutine leak.
func FuzzScanEntries(f *testing.F) {
	for _, s := range []string{"a=1\n", "a b\\\n c", "k\\u0041=v", "x=\\u12", "=v", "#c\n!d\ne", "a\\", "\\ =\\:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		text = normalize([]byte(text))
		entries, err := scanEntries("f", text)
		var e *Error
		if errors.As(err, &e) && e.Msg == msgNoKey {
			return
		}
		p, perr := (&mprops.Loader{Encoding: mprops.UTF8, DisableExpansion: true}).LoadBytes([]byte(text))
		if (err == nil) != (perr == nil) {
			t.Fatalf("scanner error %v, magiconair error %v", err, perr)
		}
		if err != nil {
			return
		}
		if got, want := uniqueKeys(entries), p.Keys(); !reflect.DeepEqual(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("scanner keys %q, magiconair keys %q", got, want)
		}
	})
}

// uniqueKeys returns the keys of entries in order of first appearance.
func uniqueKeys(entries []entry) []string {
	seen := map[string]bool{}
	var keys []string
	for _, e := range entries {
		if !seen[e.key] {
			seen[e.key] = true
			keys = append(keys, e.key)
		}
	}
	return keys
}
