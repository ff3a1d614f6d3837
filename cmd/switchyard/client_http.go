package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"
)

// Bounds on what the client reads into memory from a management answer
// and from an error answer.
const (
	maxAnswer      = 64 << 20
	maxErrorAnswer = 1 << 20
	maxErrorText   = 300
)

// apiClient sends requests to one of the server's listeners.
type apiClient struct {
	base    *url.URL
	hc      *http.Client
	setting string // how a user points the client elsewhere, for error messages
	token   string // sent as "Authorization: Bearer <token>" when not empty
}

// newAPIClient returns a client for the listener at base, giving up on a
// request after timeout (0: never). Each client has its own connections,
// which close closes.
func newAPIClient(base string, timeout time.Duration, setting string) (*apiClient, error) {
	if timeout < 0 {
		return nil, fmt.Errorf("%w: --timeout must not be negative, got %s", errUsage, timeout)
	}
	u, err := parseBaseURL(base)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errUsage, setting, err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	return &apiClient{base: u, hc: &http.Client{Timeout: timeout, Transport: tr}, setting: setting}, nil
}

// close closes the client's idle connections.
func (c *apiClient) close() { c.hc.CloseIdleConnections() }

// parseBaseURL reads a listener's base URL; "host:port" means http.
func parseBaseURL(s string) (*url.URL, error) {
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("URL %q is not http or https", s)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("URL %q has no host", s)
	}
	return u, nil
}

// endpoint returns the base URL with the path segments (each escaped as
// one segment) appended and the query set.
func (c *apiClient) endpoint(query url.Values, segs ...string) *url.URL {
	u := *c.base
	escaped := make([]string, len(segs))
	for i, s := range segs {
		escaped[i] = url.PathEscape(s)
	}
	u.Path = strings.TrimSuffix(c.base.Path, "/") + "/" + strings.Join(segs, "/")
	u.RawPath = strings.TrimSuffix(c.base.EscapedPath(), "/") + "/" + strings.Join(escaped, "/")
	u.RawQuery = query.Encode()
	return &u
}

// newRequest builds a request for the endpoint of segs.
func (c *apiClient) newRequest(ctx context.Context, method string, query url.Values, body io.Reader, segs ...string) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.endpoint(query, segs...).String(), body)
	if err == nil && c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	return req, err
}

// send makes the request and returns the answer when its status is 2xx.
// Any other status becomes an *apiError, a failed exchange a readable error.
func (c *apiClient) send(req *http.Request) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, c.transportError(err)
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorAnswer))
	return nil, parseAPIError(resp.StatusCode, body)
}

// call makes a bodiless management request and returns the answer's body.
func (c *apiClient) call(ctx context.Context, method string, query url.Values, segs ...string) ([]byte, error) {
	req, err := c.newRequest(ctx, method, query, nil, segs...)
	if err != nil {
		return nil, err
	}
	resp, err := c.send(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, c.bodyError(err)
	}
	if len(body) > maxAnswer {
		return nil, fmt.Errorf("%w: %s %s: body larger than %d bytes", errBadAnswer, method, req.URL.Path, maxAnswer)
	}
	return body, nil
}

// transportError turns a failed exchange into a message that names the
// server and says what to check.
func (c *apiClient) transportError(err error) error {
	var ue *url.Error
	switch {
	case errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, syscall.ECONNREFUSED):
		return fmt.Errorf("%w at %s: connection refused (is the server running there? set %s)",
			errUnreachable, c.base.Redacted(), c.setting)
	case isTimeout(err):
		return c.timeoutError()
	case errors.As(err, &ue):
		err = ue.Err
	}
	return fmt.Errorf("%w at %s: %w", errUnreachable, c.base.Redacted(), err)
}

// bodyError turns a failure while reading an answer's body into a message.
func (c *apiClient) bodyError(err error) error {
	switch {
	case isTimeout(err):
		return c.timeoutError()
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return fmt.Errorf("%w: %w", errBrokenAnswer, err)
	default:
		return fmt.Errorf("reading the answer from %s: %w", c.base.Redacted(), err)
	}
}

// timeoutError says that the server did not answer within the limit.
func (c *apiClient) timeoutError() error {
	return fmt.Errorf("%w: %s did not answer within %s (see --timeout)", errTimeout, c.base.Redacted(), c.hc.Timeout)
}

// isTimeout reports whether err is a network or deadline timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// apiError is an error answer: its HTTP status and the type and message of
// its body.
type apiError struct {
	Code    int
	Type    string
	Message string
}

// Error returns "<code> <type>: <message>".
func (e *apiError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("%d %s", e.Code, e.Type)
	}
	return fmt.Sprintf("%d %s: %s", e.Code, e.Type, e.Message)
}

// parseAPIError reads an error answer: the server's {"code", "type",
// "message"} body, or (from a proxy on the way, say) any other body, whose
// text then becomes the message. The code is always the HTTP status.
func parseAPIError(status int, body []byte) *apiError {
	e := &apiError{Code: status, Type: http.StatusText(status)}
	if e.Type == "" {
		e.Type = "HTTPError"
	}
	var fields map[string]any
	if json.Unmarshal(body, &fields) == nil {
		typ, _ := fields["type"].(string)
		msg, _ := fields["message"].(string)
		if msg == "" {
			msg, _ = fields["error"].(string)
		}
		if typ != "" || msg != "" {
			e.Type, e.Message = firstNonEmpty(typ, e.Type), msg
			return e
		}
	}
	e.Message = oneLine(body, maxErrorText)
	return e
}

// firstNonEmpty returns the first of ss that is not "".
func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// oneLine returns b as valid UTF-8 on one line, control characters and
// runs of white space made one space, cut to at most limit runes.
func oneLine(b []byte, limit int) string {
	s := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(string(b), "\uFFFD"))
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return string([]rune(s)[:limit]) + "…"
}
