package wire

import (
	"reflect"
	"testing"

	"github.com/switchyard/switchyard/batching"
)

func TestToBatching(t *testing.T) {
	stream := batching.NewStream()
	tests := []struct {
		name string
		resp Response
		want batching.Response
	}{
		{
			name: "data item is the body, properties kept in order",
			resp: Response{Code: 200, Message: "OK", Props: []batching.Prop{prop("a", "1"), prop("a", "2")}, Content: []batching.Item{item("x", "no"), item("data", "yes")}},
			want: batching.Response{Code: 200, Message: "OK", Props: []batching.Prop{prop("a", "1"), prop("a", "2")}, Body: []byte("yes")},
		},
		{
			name: "first item without a data key",
			resp: Response{Code: 200, Content: []batching.Item{item("x", "first"), item("y", "second")}},
			want: batching.Response{Code: 200, Body: []byte("first")},
		},
		{
			name: "no content",
			resp: Response{Code: 204},
			want: batching.Response{Code: 204},
		},
		{
			name: "streamed",
			resp: Response{Code: 200, Streaming: true},
			want: batching.Response{Code: 200, Stream: stream},
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
	r := &Response{Props: []batching.Prop{prop("k", "1"), prop("k", "2")}}
	if v, ok := r.Prop("k"); !ok || v != "2" {
		t.Errorf("Prop(k) = %q, %v; want the last value", v, ok)
	}
	if _, ok := r.Prop("missing"); ok {
		t.Error("Prop found a key that is not there")
	}
}
