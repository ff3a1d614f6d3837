package properties

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: magiconair's
// lexer runs one per parse, and it must always finish.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
