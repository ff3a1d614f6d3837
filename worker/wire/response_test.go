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
			name: "data item is the body, later property wins",
			resp: Response{Code: 200, Message: "OK", Props: []batching.Prop{prop("a", "1"), prop("a", "2")}, Content: []batching.Item{item("x", "no"), item("data", "yes")}},
			want: batching.Response{Code: 200, Message: "OK", Props: map[string]string{"a": "2"}, Body: []byte("yes")},
		},
		{
			name: "first item without a data key",
			resp: Response{Code: 200, Content: []batching.Item{item("x", "first"), item("y", "second")}},
			want: batching.Response{Code: 200, Props: map[string]string{}, Body: []byte("first")},
		},
		{
			name: "no content",
			resp: Response{Code: 204},
			want: batching.Response{Code: 204, Props: map[string]string{}},
		},
		{
			name: "streamed",
			resp: Response{Code: 200, Streaming: true},
			want: batching.Response{Code: 200, Props: map[string]string{}, Stream: stream},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.resp.ToBatching(stream); !reflect.DeepEqual(*got, tt.want) {
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
