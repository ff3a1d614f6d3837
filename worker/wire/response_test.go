package wire

import (
	"reflect"
	"testing"

	"github.com/switchyard/switchyard/message"
)

func TestToBatching(t *testing.T) {
	stream := message.NewStream()
	tests := []struct {
		name string
		resp Response
		want message.Response
	}{
		{
			name: "data item is the body, properties kept in order",
			resp: Response{Code: 200, Message: "OK", Props: []message.Prop{prop("a", "1"), prop("a", "2")}, Content: []message.Item{item("x", "no"), item("data", "yes")}},
			want: message.Response{Code: 200, Message: "OK", Props: []message.Prop{prop("a", "1"), prop("a", "2")}, Body: []byte("yes")},
		},
		{
			name: "first item without a data key",
			resp: Response{Code: 200, Content: []message.Item{item("x", "first"), item("y", "second")}},
			want: message.Response{Code: 200, Body: []byte("first")},
		},
		{
			name: "no content",
			resp: Response{Code: 204},
			want: message.Response{Code: 204},
		},
		{
			name: "streamed",
			resp: Response{Code: 200, Streaming: true},
			want: message.Response{Code: 200, Stream: stream},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.resp.ToBatching(stream)
			if len(got.Props) == 0 {
				got.Props = nil // an empty reader slice and none are the same answer
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("got %+v, want %+v", *got, tt.want)
			}
		})
	}
}

func TestResponseProp(t *testing.T) {
	r := &Response{Props: []message.Prop{prop("k", "1"), prop("k", "2")}}
	if v, ok := r.Prop("k"); !ok || v != "2" {
		t.Errorf("Prop(k) = %q, %v; want the last value", v, ok)
	}
	if _, ok := r.Prop("missing"); ok {
		t.Error("Prop found a key that is not there")
	}
}
