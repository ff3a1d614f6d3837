package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
)

// MaxBody is the largest invocation body the runtime reads.
const MaxBody = 4 << 20

// DefaultGrace is how long a stopping runtime lets running invocations finish.
const DefaultGrace = 30 * time.Second

// Runner answers prompts; *Agent is one.
type Runner interface {
	Run(ctx context.Context, prompt string) (string, error)
	Stream(ctx context.Context, prompt string, emit func(string) error) (string, error)
}

// ServerConfig is what NewServer needs.
type ServerConfig struct {
	Runner  Runner
	Timeout time.Duration // the longest one invocation may take; 0: DefaultTimeout
	Grace   time.Duration // shutdown grace; 0: DefaultGrace
	Health  *Health       // nil: a new one
	Log     *zap.Logger
}

// Server serves the hosted agent runtime's HTTP contract: POST /invocations
// and GET /ping.
type Server struct {
	cfg    ServerConfig
	health *Health
	http   *http.Server
	ln     net.Listener
}

// NewServer returns a Server for cfg; Listen, then Serve, start it.
func NewServer(cfg ServerConfig) *Server {
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Grace == 0 {
		cfg.Grace = DefaultGrace
	}
	s := &Server{cfg: cfg, health: cfg.Health}
	if s.health == nil {
		s.health = NewHealth(nil)
	}
	s.http = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute,
		IdleTimeout: 2 * time.Minute, ErrorLog: zap.NewStdLog(cfg.Log)}
	return s
}

// Listen opens the listening socket at addr (HOST:PORT).
func (s *Server) Listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("agent: listen: %w", err)
	}
	s.ln = ln
	return nil
}

// Addr returns the address the server listens at.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve answers requests until ctx ends, then stops taking new ones and
// lets running invocations finish within the grace period.
func (s *Server) Serve(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.http.Serve(s.ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	s.cfg.Log.Info("stopping: no new invocations; running ones may finish", zap.Duration("grace", s.cfg.Grace))
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.Grace)
	defer cancel()
	err := s.http.Shutdown(sctx)
	if err != nil {
		_ = s.http.Close()
	}
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}

// ServeHTTP routes a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/invocations":
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeError(w, fmt.Errorf("%w: %s /invocations; use POST", ErrMethod, r.Method))
			return
		}
		s.invoke(w, r)
	case "/ping":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, fmt.Errorf("%w: %s /ping; use GET", ErrMethod, r.Method))
			return
		}
		writeJSON(w, http.StatusOK, s.health.Ping())
	default:
		if dataPlane(r.URL.Path) {
			s.invokeRuntime(w, r)
			return
		}
		writeError(w, fmt.Errorf("%w: %q; the routes are POST /invocations, GET /ping and "+
			"POST /runtimes/{agentRuntimeArn}/invocations", ErrNoRoute, r.URL.Path))
	}
}

// invoke runs one invocation: the whole answer as {"result"}, or its text
// as server-sent events when the client accepts them.
func (s *Server) invoke(w http.ResponseWriter, r *http.Request) {
	prompt, err := readPrompt(w, r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	end := s.health.Begin()
	defer end()
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Timeout)
	defer cancel()
	if acceptsEvents(r.Header.Get("Accept")) {
		s.stream(ctx, w, r, prompt)
		return
	}
	result, err := s.cfg.Runner.Run(ctx, prompt)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"result": result})
}

// stream answers with the text as it is generated. An error before the
// first text is an ordinary error answer; after it, one last event with
// the error ends the stream.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, r *http.Request, prompt string) {
	ev := &events{w: w, rc: http.NewResponseController(w)}
	_, err := s.cfg.Runner.Stream(ctx, prompt, ev.text)
	switch {
	case err == nil:
		ev.begin()
	case !ev.started || r.Context().Err() != nil:
		s.fail(w, r, err)
	default:
		code, kind := failure(err)
		s.logFailure(r, code, err)
		_ = ev.send(streamError{Error: message(err), Type: kind, Code: code, Message: "the answer broke off"})
	}
}

// fail answers err, unless the client has gone.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		s.cfg.Log.Info("the client left before the answer", zap.String("path", r.URL.Path), zap.Error(err))
		return
	}
	code, _ := failure(err)
	s.logFailure(r, code, err)
	if awsErrors(r) {
		writeRuntimeError(w, err)
		return
	}
	writeError(w, err)
}

func (s *Server) logFailure(r *http.Request, code int, err error) {
	log := s.cfg.Log.Info
	if code >= 500 {
		log = s.cfg.Log.Warn
	}
	log("invocation failed", zap.String("path", r.URL.Path), zap.Int("status", code), zap.Error(err))
}

// readPrompt reads the invocation's prompt: the body must be a JSON
// object; a missing or null prompt reads as "", which, like any prompt of
// white space only, no reasoning model takes, so it is refused here.
func readPrompt(w http.ResponseWriter, r *http.Request) (string, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return "", fmt.Errorf("%w: the body is larger than %d bytes", ErrTooLarge, MaxBody)
	case err != nil:
		return "", fmt.Errorf("%w: reading the body: %w", ErrBadRequest, err)
	}
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil || req == nil {
		return "", fmt.Errorf(`%w: the body is not a JSON object: send {"prompt": "..."}`, ErrBadRequest)
	}
	var prompt *string
	if raw, ok := req["prompt"]; ok && json.Unmarshal(raw, &prompt) != nil {
		return "", fmt.Errorf("%w: prompt must be a string, not %s", ErrBadRequest, quote(raw))
	}
	if prompt == nil || strings.TrimSpace(*prompt) == "" {
		return "", fmt.Errorf(`%w: prompt is missing or empty: send {"prompt": "..."}`, ErrBadRequest)
	}
	return *prompt, nil
}

// acceptsEvents reports whether an Accept header lists text/event-stream
// with a q above 0.
func acceptsEvents(accept string) bool {
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil || mt != "text/event-stream" {
			continue
		}
		q, err := strconv.ParseFloat(params["q"], 64)
		if params["q"] == "" || err == nil && q > 0 {
			return true
		}
	}
	return false
}

// streamError is the last event of a stream that broke off, in the shape
// the hosted runtime's application object gives one.
type streamError struct {
	Error   string `json:"error"`
	Type    string `json:"error_type"`
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// events writes server-sent events, each `data: <JSON>` and a blank line,
// flushed at once.
type events struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
}

func (e *events) begin() {
	if e.started {
		return
	}
	e.started = true
	h := e.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	e.w.WriteHeader(http.StatusOK)
}

// text sends one piece of the answer as a JSON string.
func (e *events) text(s string) error { return e.send(s) }

func (e *events) send(v any) error {
	e.begin()
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(e.w, "data: %s\n\n", b); err != nil {
		return err
	}
	return e.rc.Flush()
}

// StreamError is the error event that ended a streamed answer.
type StreamError struct {
	Type    string // error_type
	Message string // error
}

func (e *StreamError) Error() string {
	return "agent: the answer broke off: " + e.Type + ": " + e.Message
}

// ReadStream reads a streamed /invocations answer, handing each piece of
// text to text as it arrives. An error event ends it with a *StreamError;
// an event that is neither is an error too.
func ReadStream(r io.Reader, text func(string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxBody)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var piece string
		if json.Unmarshal([]byte(data), &piece) == nil {
			if err := text(piece); err != nil {
				return err
			}
			continue
		}
		var e streamError
		if json.Unmarshal([]byte(data), &e) == nil && e.Error != "" {
			return &StreamError{Type: e.Type, Message: e.Error}
		}
		return fmt.Errorf("agent: an event that is neither text nor an error: %s", quote([]byte(data)))
	}
	return sc.Err()
}
