package awsapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream/eventstreamapi"
)

// decoded is one event stream message: its type headers and payload.
type decoded struct {
	messageType, eventType, exceptionType, contentType string
	payload                                            string
}

func (d decoded) String() string {
	name := d.eventType
	if d.messageType == "exception" {
		name = "!" + d.exceptionType
	}
	return name + " " + d.payload
}

// decodeAll reads every message of an encoded stream with the SDK's decoder.
func decodeAll(t *testing.T, b []byte) []decoded {
	t.Helper()
	dec := eventstream.NewDecoder()
	r := bytes.NewReader(b)
	var out []decoded
	for {
		m, err := dec.Decode(r, nil)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("decode message %d: %v", len(out), err)
		}
		get := func(name string) string {
			if v := m.Headers.Get(name); v != nil {
				return v.String()
			}
			return ""
		}
		out = append(out, decoded{
			messageType: get(eventstreamapi.MessageTypeHeader), eventType: get(eventstreamapi.EventTypeHeader),
			exceptionType: get(eventstreamapi.ExceptionTypeHeader), contentType: get(eventstreamapi.ContentTypeHeader),
			payload: string(m.Payload),
		})
	}
}

func names(ds []decoded) string {
	var s []string
	for _, d := range ds {
		s = append(s, d.String())
	}
	return strings.Join(s, "\n")
}

func TestConverseStream(t *testing.T) {
	c := NewConverseStream()
	var b []byte
	b = append(b, c.Text("Let me ")...)
	b = append(b, c.Text("check.")...)
	b = append(b, c.ToolStart("t1", "classify")...)
	b = append(b, c.ToolInput(`{"text":`)...)
	b = append(b, c.ToolInput(`"hi"}`)...)
	b = append(b, c.Text("")...)
	b = append(b, c.Stop(StopToolUse, Usage{InputTokens: 3, OutputTokens: 4}, 7*time.Millisecond)...)
	b = append(b, c.Text("late")...)
	want := `messageStart {"role":"assistant"}
contentBlockDelta {"contentBlockIndex":0,"delta":{"text":"Let me "}}
contentBlockDelta {"contentBlockIndex":0,"delta":{"text":"check."}}
contentBlockStop {"contentBlockIndex":0}
contentBlockStart {"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"t1","name":"classify"}}}
contentBlockDelta {"contentBlockIndex":1,"delta":{"toolUse":{"input":"{\"text\":"}}}
contentBlockDelta {"contentBlockIndex":1,"delta":{"toolUse":{"input":"\"hi\"}"}}}
contentBlockStop {"contentBlockIndex":1}
messageStop {"stopReason":"tool_use"}
metadata {"usage":{"inputTokens":3,"outputTokens":4,"totalTokens":7},"metrics":{"latencyMs":7}}`
	ds := decodeAll(t, b)
	if got := names(ds); got != want {
		t.Errorf("events:\n%s\nwant\n%s", got, want)
	}
	for _, d := range ds {
		if d.messageType != "event" || d.contentType != "application/json" {
			t.Errorf("headers of %s: %+v", d.eventType, d)
		}
	}
}

func TestConverseStreamWholeAndFail(t *testing.T) {
	in, _ := json.Marshal(map[string]string{"text": "x"})
	r := Reply{Text: "ok", ToolUses: []ToolUse{{ID: "a", Name: "f", Input: in}}, StopReason: StopToolUse}
	got := names(decodeAll(t, NewConverseStream().Whole(r, 0)))
	if !strings.Contains(got, `contentBlockStart {"contentBlockIndex":1,"start":{"toolUse":{"toolUseId":"a","name":"f"}}}`) ||
		!strings.Contains(got, `{"toolUse":{"input":"{\"text\":\"x\"}"}}`) || !strings.HasSuffix(got, `"metrics":{"latencyMs":0}}`) {
		t.Errorf("whole reply as a stream:\n%s", got)
	}
	tests := []struct {
		f    Failure
		want string
	}{
		{Failure{Kind: KindModel, Message: "boom", OriginalStatus: 424, OriginalMessage: "raw"},
			`!modelStreamErrorException {"message":"boom","originalStatusCode":424,"originalMessage":"raw"}`},
		{Failure{Kind: KindUnavailable, Message: "worker died"}, `!serviceUnavailableException {"message":"worker died"}`},
		{Failure{Kind: KindInternal, Message: "?"}, `!internalServerException {"message":"?"}`},
		{Failure{Kind: KindThrottled, Message: "full"}, `!throttlingException {"message":"full"}`},
	}
	for _, tt := range tests {
		c := NewConverseStream()
		b := append(c.Text("hi"), c.Fail(tt.f)...)
		ds := decodeAll(t, b)
		if last := ds[len(ds)-1]; last.String() != tt.want || last.messageType != "exception" {
			t.Errorf("Fail(%+v) ends with %s, want %s", tt.f, last, tt.want)
		}
		if c.Stop(StopEndTurn, Usage{}, 0) != nil {
			t.Error("Stop after Fail sent events")
		}
	}
}

func TestPayloadStream(t *testing.T) {
	p := NewPayloadStream()
	big := bytes.Repeat([]byte("x"), maxPart+10)
	ds := decodeAll(t, append(append(p.Part([]byte(`{"token":1}`+"\n")), p.Part(nil)...), p.Part(big)...))
	if len(ds) != 3 || ds[0].eventType != "PayloadPart" || ds[0].payload != `{"token":1}`+"\n" ||
		ds[0].contentType != "application/octet-stream" || len(ds[1].payload) != maxPart || len(ds[2].payload) != 10 {
		t.Errorf("parts: %d %+v", len(ds), ds[0])
	}
	tests := []struct {
		f    Failure
		want string
	}{
		{Failure{Kind: KindModel, Message: "boom"}, `!ModelStreamError {"Message":"boom","ErrorCode":"StreamBroken"}`},
		{Failure{Kind: KindTimeout, Message: "slow"}, `!ModelStreamError {"Message":"slow","ErrorCode":"ModelInvocationTimeExceeded"}`},
		{Failure{Kind: KindUnavailable, Message: "died"}, `!InternalStreamFailure {"Message":"died"}`},
	}
	for _, tt := range tests {
		if got := decodeAll(t, NewPayloadStream().Fail(tt.f))[0].String(); got != tt.want {
			t.Errorf("Fail(%+v) = %s, want %s", tt.f, got, tt.want)
		}
	}
}
