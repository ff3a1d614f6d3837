package api

import (
	"strconv"
	"strings"
)

// QuoteLimit is how many bytes of a client's input an error message quotes.
const QuoteLimit = 64

// Quote returns input for an error message: escaped in double quotes, and
// cut after QuoteLimit bytes with "..." after the closing quote, so that a
// 10 KB model name or path does not come back whole.
func Quote[T string | []byte](input T) string {
	if len(input) <= QuoteLimit {
		return strconv.Quote(string(input))
	}
	return strconv.Quote(strings.ToValidUTF8(string(input[:QuoteLimit]), "")) + "..."
}
