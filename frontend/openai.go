package frontend

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"slices"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
)

// shape says how an inference answer is written for its route and client.
type shape struct {
	chat         bool      // POST /v1/chat/completions
	sse          bool      // the client's Accept lists text/event-stream
	includeUsage bool      // chat: stream_options.include_usage
	api          apiKind   // the API whose shapes the answer takes
	stream       bool      // an AWS route that answers with an event stream
	model        string    // the registered model's name
	id           string    // the request id
	created      int64     // the request's arrival, Unix seconds
	start        time.Time // the request's arrival
}

// chatRequest holds the fields of an OpenAI chat request the front-end
// reads itself; the worker checks the rest of the schema.
type chatRequest struct {
	model        string
	includeUsage bool
	tools        bool // a non-empty tools list
	n            int  // 0 when absent
}

// parseChatRequest reads a chat body: it must be a JSON object, "model" a
// string, stream_options.include_usage a boolean, "tools" a list and "n" a
// positive integer when present.
func parseChatRequest(body []byte) (chatRequest, error) {
	var req chatRequest
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return req, badRequestf("Request body is not a JSON object: %v", notObject(err))
	}
	if v, ok := raw["model"]; ok && !isNull(v) {
		if json.Unmarshal(v, &req.model) != nil {
			return req, badRequest("Field model must be a string.")
		}
	}
	if v, ok := raw["stream_options"]; ok && !isNull(v) {
		var opts struct {
			IncludeUsage *bool `json:"include_usage"`
		}
		if json.Unmarshal(v, &opts) != nil {
			return req, badRequest("Field stream_options must be an object whose include_usage is a boolean.")
		}
		req.includeUsage = opts.IncludeUsage != nil && *opts.IncludeUsage
	}
	return req, parseChatLimits(raw, &req)
}

// parseChatLimits reads the fields a model must declare support for:
// tools and n.
func parseChatLimits(raw map[string]json.RawMessage, req *chatRequest) error {
	if v, ok := raw["tools"]; ok && !isNull(v) {
		var tools []json.RawMessage
		if json.Unmarshal(v, &tools) != nil {
			return &paramError{param: "tools", msg: "Field tools must be a list."}
		}
		req.tools = len(tools) > 0
	}
	if v, ok := raw["n"]; ok && !isNull(v) {
		if json.Unmarshal(v, &req.n) != nil || req.n < 1 {
			return &paramError{param: "n", msg: "Field n must be a positive integer."}
		}
	}
	return nil
}

// checkChatLimits refuses what the model's handler did not declare it can
// honour: tools without supportsTools, n above maxChoices.
func (s *Server) checkChatLimits(model string, req chatRequest) error {
	if !req.tools && req.n <= 1 {
		return nil
	}
	g, err := s.models.Generation(model)
	if err != nil {
		return err
	}
	if req.tools && !g.SupportsTools {
		return &paramError{param: "tools", code: "unsupported_parameter",
			msg: fmt.Sprintf("Model %q does not support tools: its handler did not declare supports_tools.", model)}
	}
	if req.n > g.Choices() {
		return &paramError{param: "n", code: "unsupported_value",
			msg: fmt.Sprintf("Model %q returns at most %d choices; n is %d.", model, g.Choices(), req.n)}
	}
	return nil
}

// notObject is the reason a body that unmarshaled without error is still
// not an object (it was null).
func notObject(err error) error {
	if err != nil {
		return err
	}
	return errors.New("it is null")
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// chatModel takes the model from an OpenAI request body's "model" field when
// it names a registered model; clients often send a hub id there instead,
// so anything else falls back to the /invocations order. It then refuses
// tools and n the model did not declare (checkChatLimits).
func (s *Server) chatModel(ctx *fasthttp.RequestCtx, sel *selectors, sh *shape) (string, error) {
	req, err := parseChatRequest(sel.body)
	if err != nil {
		return "", err
	}
	sh.includeUsage = req.includeUsage
	model := req.model
	if _, found := slices.BinarySearch(s.models.Names(), model); model == "" || !found {
		if model, err = s.targetModel(ctx, sel); err != nil {
			return "", err
		}
	}
	return model, s.checkChatLimits(model, req)
}

// isJSONType reports whether a Content-Type names a JSON body.
func isJSONType(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == contentTypeJSON || mt == "text/json")
}

// withModel returns a JSON object with its "model" field set to model (added
// when missing), keeping the other fields and their order; ok is false when
// body is not one JSON object.
func withModel(body []byte, model string) (out []byte, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, false
	}
	name, _ := json.Marshal(model)
	out = append(out, '{')
	seen := false
	for dec.More() {
		k, err := dec.Token()
		key, isKey := k.(string)
		var v json.RawMessage
		if err != nil || !isKey || dec.Decode(&v) != nil {
			return nil, false
		}
		if key == "model" {
			v, seen = name, true
		}
		out = appendMember(out, key, v)
	}
	if !closedObject(dec) {
		return nil, false
	}
	if !seen {
		out = appendMember(out, "model", name)
	}
	return append(out, '}'), true
}

// appendMember appends "key":value to an object being written.
func appendMember(out []byte, key string, v json.RawMessage) []byte {
	if out[len(out)-1] != '{' {
		out = append(out, ',')
	}
	k, _ := json.Marshal(key)
	return append(append(append(out, k...), ':'), v...)
}

// closedObject reads the closing brace and checks that nothing follows.
func closedObject(dec *json.Decoder) bool {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return false
	}
	_, err := dec.Token()
	return err == io.EOF
}

// openAIModel is one entry of GET /v1/models.
type openAIModel struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// openAIList is the body of GET /v1/models.
type openAIList struct {
	Object string        `json:"object"`
	Data   []openAIModel `json:"data"`
}

const ownedBy = "switchyard"

func (s *Server) openAIEntry(name string) openAIModel {
	return openAIModel{ID: name, Object: "model", Created: s.started.Unix(), OwnedBy: ownedBy}
}

// openAIModels answers GET /v1/models with every registered model.
func (s *Server) openAIModels(ctx *fasthttp.RequestCtx) error {
	names := s.models.Names()
	list := openAIList{Object: "list", Data: make([]openAIModel, 0, len(names))}
	for _, n := range names {
		list.Data = append(list.Data, s.openAIEntry(n))
	}
	writeJSON(ctx, fasthttp.StatusOK, list)
	return nil
}

// openAIModelByName answers GET /v1/models/{name}.
func (s *Server) openAIModelByName(ctx *fasthttp.RequestCtx, name string) error {
	if err := checkModelName(name); err != nil {
		return err
	}
	if _, found := slices.BinarySearch(s.models.Names(), name); !found {
		return fmt.Errorf("%w: %s", api.ErrModelNotFound, name)
	}
	writeJSON(ctx, fasthttp.StatusOK, s.openAIEntry(name))
	return nil
}
