package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
)

// echoHeaderSource is a model.py that answers with the x-big request
// header's length and sends the header back as a reply property.
const echoHeaderSource = `from djl_python import Output


def handle(inputs):
    if inputs.is_empty():
        return None
    big = inputs.get_property("x-big") or ""
    return Output().add_property("x-big-echo", big).add(str(len(big)))
`

// TestLargeHeader sends a request with a 40 KB header through the server to
// a real worker and back: past the 32767 bytes an int16 string length could
// carry, a property travels both ways now that strings carry int32 lengths.
func TestLargeHeader(t *testing.T) {
	store := t.TempDir()
	WriteModel(t, store, "echo", map[string]string{"model.py": echoHeaderSource})
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(waitLimit, api.StatusHealthy, "echo")
	big := strings.Repeat("h", 40<<10)
	r := send(newClient(1), http.MethodPost, s.Inference+"/predictions/echo", []byte("x"), "X-Big", big)
	if r.err != nil || r.code != http.StatusOK || string(r.body) != "40960" {
		t.Fatalf("a 40 KB header: %d %q %v, want 200 and the handler seeing 40960 bytes", r.code, r.body, r.err)
	}
	if got := r.header.Get("x-big-echo"); got != big {
		t.Errorf("the 40 KB reply property came back with %d bytes", len(got))
	}
}
