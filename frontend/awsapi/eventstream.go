package awsapi

import (
	"bytes"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream/eventstreamapi"
)

// ContentTypeEventStream is the media type of an AWS event stream answer.
const ContentTypeEventStream = "application/vnd.amazon.eventstream"

const (
	messageEvent     = "event"
	messageException = "exception"
	contentJSON      = "application/json"
	contentBytes     = "application/octet-stream"
)

// events encodes event stream messages into one buffer with the SDK's
// encoder; take hands out what was encoded since the last take.
type events struct {
	enc *eventstream.Encoder
	buf bytes.Buffer
}

func newEvents() *events { return &events{enc: eventstream.NewEncoder()} }

// event appends an event message of the given type.
func (e *events) event(eventType, contentType string, payload []byte) {
	var h eventstream.Headers
	h.Set(eventstreamapi.EventTypeHeader, eventstream.StringValue(eventType))
	h.Set(eventstreamapi.ContentTypeHeader, eventstream.StringValue(contentType))
	h.Set(eventstreamapi.MessageTypeHeader, eventstream.StringValue(messageEvent))
	e.encode(eventstream.Message{Headers: h, Payload: payload})
}

// exception appends an exception message: the SDKs raise it as the error
// named by exceptionType (a member of the stream's union), with the JSON
// payload as its fields.
func (e *events) exception(exceptionType string, payload []byte) {
	var h eventstream.Headers
	h.Set(eventstreamapi.ExceptionTypeHeader, eventstream.StringValue(exceptionType))
	h.Set(eventstreamapi.ContentTypeHeader, eventstream.StringValue(contentJSON))
	h.Set(eventstreamapi.MessageTypeHeader, eventstream.StringValue(messageException))
	e.encode(eventstream.Message{Headers: h, Payload: payload})
}

func (e *events) encode(m eventstream.Message) {
	// Writing to a bytes.Buffer cannot fail, and the headers are this
	// package's constants, well within the format's limits.
	_ = e.enc.Encode(&e.buf, m)
}

// take returns the messages encoded since the last call.
func (e *events) take() []byte {
	if e.buf.Len() == 0 {
		return nil
	}
	out := bytes.Clone(e.buf.Bytes())
	e.buf.Reset()
	return out
}
