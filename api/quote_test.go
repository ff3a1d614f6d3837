package api

import (
	"strings"
	"testing"
)

func TestQuote(t *testing.T) {
	long := strings.Repeat("n", 10<<10)
	tests := []struct{ name, in, want string }{
		{"short", "langid", `"langid"`},
		{"escaped", "a\"b\n\x00", `"a\"b\n\x00"`},
		{"at the limit", long[:QuoteLimit], `"` + long[:QuoteLimit] + `"`},
		{"cut", long, `"` + long[:QuoteLimit] + `"...`},
		{"cut inside a rune", "x" + strings.Repeat("é", 40), `"x` + strings.Repeat("é", 31) + `"...`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Quote(tt.in); got != tt.want {
				t.Errorf("Quote = %s, want %s", got, tt.want)
			}
			if got := Quote([]byte(tt.in)); got != tt.want {
				t.Errorf("Quote([]byte) = %s, want %s", got, tt.want)
			}
		})
	}
}
