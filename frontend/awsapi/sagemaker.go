package awsapi

import "encoding/json"

// SageMaker Runtime's names for its response headers and its production
// variant.
const (
	// HeaderInvokedVariant names the variant that answered; switchyard has one.
	HeaderInvokedVariant = "X-Amzn-Invoked-Production-Variant"
	// HeaderStreamContentType carries the model's own content type on a
	// streamed answer, whose Content-Type is the event stream's.
	HeaderStreamContentType = "X-Amzn-SageMaker-Content-Type"
	// Variant is the one production variant switchyard reports.
	Variant = "AllTraffic"
)

// maxPart bounds the bytes of one PayloadPart event; a longer chunk becomes
// several parts, which clients join.
const maxPart = 1 << 20

// PayloadStream frames a model's streamed bytes as
// InvokeEndpointWithResponseStream answers them: one PayloadPart event per
// chunk, and an exception event when the stream fails. Use one per answer,
// from one goroutine.
type PayloadStream struct {
	ev *events
}

// NewPayloadStream returns an empty PayloadStream.
func NewPayloadStream() *PayloadStream { return &PayloadStream{ev: newEvents()} }

// Part returns the PayloadPart events carrying b (none for an empty b).
func (p *PayloadStream) Part(b []byte) []byte {
	for len(b) > 0 {
		n := min(len(b), maxPart)
		p.ev.event("PayloadPart", contentBytes, b[:n])
		b = b[n:]
	}
	return p.ev.take()
}

// Fail returns the exception event that ends a stream that failed with f:
// ModelStreamError (error code StreamBroken, or ModelInvocationTimeExceeded
// for a timeout) when the model broke it, InternalStreamFailure when the
// server could not go on (the worker died, the server is stopping).
func (p *PayloadStream) Fail(f Failure) []byte {
	if f.Kind == KindUnavailable || f.Kind == KindInternal {
		p.ev.exception("InternalStreamFailure", mustJSON(struct {
			Message string `json:"Message"`
		}{f.Message}))
		return p.ev.take()
	}
	code := "StreamBroken"
	if f.Kind == KindTimeout {
		code = "ModelInvocationTimeExceeded"
	}
	p.ev.exception("ModelStreamError", mustJSON(struct {
		Message   string `json:"Message"`
		ErrorCode string `json:"ErrorCode"`
	}{f.Message, code}))
	return p.ev.take()
}

// mustJSON encodes one of this package's own structs, which always encode.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(`{}`)
	}
	return b
}
