package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/frontend/genstream"
)

// chatRequest holds the fields of an OpenAI chat request the front-end
// reads itself; the worker checks the rest of the schema.
type chatRequest struct {
	model        string
	includeUsage bool
	tools        bool // a non-empty tools list
	n            int  // 0 when absent
}

// decodeChat decodes POST /v1/chat/completions. The model is the body's
// "model" when it names a registered model (itself or through an alias of
// model_aliases); clients often send a hub id
// there instead, so anything else falls back to /invocations' rule. Tools
// and n the model did not declare are refused (checkChatLimits).
func (d *Dialect) decodeChat(req dialect.Request) (dialect.Job, error) {
	chat, err := parseChatRequest(req.Body())
	if err != nil {
		return dialect.Job{}, err
	}
	model := d.aliases.Resolve(chat.model)
	if base, ok := dialect.AsAdapter(d.models, model, &req.Input); model != "" && ok {
		model = base
	} else if model == "" || !dialect.HasModel(d.models, model) {
		named := model
		if model, err = dialect.TargetModel(req, d.models); err != nil {
			return dialect.Job{}, err
		}
		if named != "" && dialect.ServesAdapters(d.models, model) {
			return dialect.Job{}, fmt.Errorf("%w: %s is neither a model nor an adapter of %s", api.ErrAdapterNotFound, named, model)
		}
	}
	if err := d.checkChatLimits(model, chat); err != nil {
		return dialect.Job{}, err
	}
	return dialect.Job{Model: model, Input: req.Input, Reply: chatReply{usage: chat.includeUsage}}, nil
}

// parseChatRequest reads a chat body: it must be a JSON object, "model" a
// string, stream_options.include_usage a boolean, "tools" a list and "n" a
// positive integer when present.
func parseChatRequest(body []byte) (chatRequest, error) {
	var req chatRequest
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return req, dialect.BadRequestf("Request body is not a JSON object: %v", notObject(err))
	}
	if v, ok := raw["model"]; ok && !isNull(v) {
		if json.Unmarshal(v, &req.model) != nil {
			return req, dialect.BadRequest("Field model must be a string.")
		}
	}
	if v, ok := raw["stream_options"]; ok && !isNull(v) {
		var opts struct {
			IncludeUsage *bool `json:"include_usage"`
		}
		if json.Unmarshal(v, &opts) != nil {
			return req, dialect.BadRequest("Field stream_options must be an object whose include_usage is a boolean.")
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
func (d *Dialect) checkChatLimits(model string, req chatRequest) error {
	if !req.tools && req.n <= 1 {
		return nil
	}
	g, err := d.models.Generation(model)
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

// chatReply writes a chat answer: a chat.completion with the registered
// model's name, or a stream of chat.completion.chunk events.
type chatReply struct {
	usage bool // stream_options.include_usage
}

// Whole writes the worker's answer with the registered model's name as its
// "model" when it is a JSON object.
func (chatReply) Whole(a dialect.Answer) error {
	body := a.Body
	if a.Code < 300 && isJSONType(dialect.PropValue(a.Props, "content-type")) {
		if b, ok := withModel(body, a.Model); ok {
			body = b
		}
	}
	a.Write(body)
	return nil
}

// Stream frames a JSON-lines stream as chat.completion.chunk events; any
// other stream passes through.
func (r chatReply) Stream(a dialect.Answer, s dialect.Stream) error {
	lines := genstream.IsJSONLines(dialect.PropValue(a.Props, "content-type"))
	var f dialect.Framer = genstream.Raw{}
	if lines {
		f = newChatFramer(genstream.ChunkHead{ID: "chatcmpl-" + a.ID, Model: a.Model, Created: a.Ctx.Time().Unix()}, r.usage)
	}
	if err := s.Start(f); err != nil {
		return err
	}
	h := &a.Ctx.Response.Header
	dialect.CopyProps(h, a.Props)
	if lines {
		genstream.SetEventStream(h)
	}
	return nil
}

// isJSONType reports whether a Content-Type names a JSON body.
func isJSONType(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == dialect.ContentTypeJSON || mt == "text/json")
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
