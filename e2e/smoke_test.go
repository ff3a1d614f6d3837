package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
)

// TestExamplesServe starts the server on the shipped example models and
// invokes each one, the way the README's quickstart does.
func TestExamplesServe(t *testing.T) {
	s := StartServer(t, Options{Store: "../examples/models", Models: "langid,langdetect"})
	s.WaitStatus(60*time.Second, api.StatusHealthy, "langid", "langdetect")
	code, body := s.Do(http.MethodPost, s.Inference+"/predictions/langid", "application/json", []byte(`{"inputs": "Bonjour tout le monde"}`))
	if code != http.StatusOK || !strings.Contains(string(body), `"fra"`) {
		t.Fatalf("langid: %d %s", code, body)
	}
	code, body = s.Do(http.MethodPost, s.Inference+"/invocations", "application/json", []byte(`{"inputs": "Guten Morgen, wie geht es dir?"}`),
		"X-Amzn-SageMaker-Target-Model", "langdetect.tar.gz")
	if code != http.StatusOK || !strings.Contains(string(body), `"de"`) {
		t.Fatalf("langdetect: %d %s", code, body)
	}
}
