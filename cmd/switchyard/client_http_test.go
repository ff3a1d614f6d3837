package main

import (
	"net/url"
	"strings"
	"testing"
)

func TestEndpoint(t *testing.T) {
	tests := []struct {
		base  string
		query url.Values
		segs  []string
		want  string
	}{
		{"http://127.0.0.1:8084", nil, []string{"models"}, "http://127.0.0.1:8084/models"},
		{"127.0.0.1:8084", url.Values{"limit": {"100"}}, []string{"models"}, "http://127.0.0.1:8084/models?limit=100"},
		{"http://h/", nil, []string{"models", "a"}, "http://h/models/a"},
		{"https://h/prefix/", nil, []string{"predictions", "m"}, "https://h/prefix/predictions/m"},
		{"http://h/sub%20dir", nil, []string{"models", "a b"}, "http://h/sub%20dir/models/a%20b"},
		{"http://h", nil, []string{"models", "a/../b"}, "http://h/models/a%2F..%2Fb"},
		{"http://h", url.Values{"url": {"s3://b/m.tar.gz?x=1"}}, []string{"models"}, "http://h/models?url=s3%3A%2F%2Fb%2Fm.tar.gz%3Fx%3D1"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			c, err := newAPIClient(tt.base, 0, "--url")
			if err != nil {
				t.Fatal(err)
			}
			if got := c.endpoint(tt.query, tt.segs...).String(); got != tt.want {
				t.Errorf("endpoint = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestParseAPIError(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"server shape", 404, `{"code": 404, "type": "ModelNotFoundException", "message": "model not found: x"}`,
			"404 ModelNotFoundException: model not found: x"},
		{"status wins over code", 503, `{"code": 500, "type": "ServiceUnavailableException", "message": "queue full"}`,
			"503 ServiceUnavailableException: queue full"},
		{"error field", 400, `{"error": "bad input"}`, "400 Bad Request: bad input"},
		{"type only", 500, `{"type": "InternalServerException"}`, "500 InternalServerException"},
		{"other json", 502, `{"detail": 1}`, `502 Bad Gateway: {"detail": 1}`},
		{"text", 502, "<html>\n<b>bad\tgateway</b>\n</html>\n", "502 Bad Gateway: <html> <b>bad gateway</b> </html>"},
		{"empty", 500, "", "500 Internal Server Error"},
		{"unknown status", 599, "", "599 HTTPError"},
		{"invalid utf-8", 500, "a\xffb\x1b[31m", "500 Internal Server Error: a\uFFFDb [31m"},
		{"long text", 500, strings.Repeat("é", 400), "500 Internal Server Error: " + strings.Repeat("é", 300) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseAPIError(tt.status, []byte(tt.body)).Error(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
