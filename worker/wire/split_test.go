package wire

import (
	"errors"
	"reflect"
	"testing"

	"github.com/switchyard/switchyard/message"
)

func TestSplitBatch(t *testing.T) {
	ok := func(body string, props map[string]string) *splitWant {
		return &splitWant{code: 200, body: body, props: props}
	}
	tests := []struct {
		name    string
		resp    Response
		n       int
		want    []*splitWant // nil entry: missing
		wantErr error
	}{
		{
			name: "padded keys in order",
			resp: Response{Code: 200, Content: []message.Item{item("batch_000.data", "a"), item("batch_001.data", "b")}},
			n:    2,
			want: []*splitWant{ok("a", map[string]string{}), ok("b", map[string]string{})},
		},
		{
			name: "unpadded keys out of order",
			resp: Response{Code: 200, Content: []message.Item{item("batch_2.data", "c"), item("batch_0.data", "a"), item("batch_1.data", "b")}},
			n:    3,
			want: []*splitWant{ok("a", map[string]string{}), ok("b", map[string]string{}), ok("c", map[string]string{})},
		},
		{
			name: "data key wins over the first item",
			resp: Response{Code: 200, Content: []message.Item{item("batch_000.extra", "x"), item("batch_000.data", "a")}},
			n:    1,
			want: []*splitWant{ok("a", map[string]string{})},
		},
		{
			name: "first item when there is no data key",
			resp: Response{Code: 200, Content: []message.Item{item("batch_000.out", "a"), item("batch_000.more", "x")}},
			n:    1,
			want: []*splitWant{ok("a", map[string]string{})},
		},
		{
			name: "properties: prefixed ones win, unprefixed go to all",
			resp: Response{
				Code:    200,
				Props:   []message.Prop{prop("batch_001.content-type", "text/plain"), prop("content-type", "application/json"), prop("x", "1")},
				Content: []message.Item{item("batch_000.data", "a"), item("batch_001.data", "b")},
			},
			n: 2,
			want: []*splitWant{
				ok("a", map[string]string{"content-type": "application/json", "x": "1"}),
				ok("b", map[string]string{"content-type": "text/plain", "x": "1"}),
			},
		},
		{
			name: "an item's own status",
			resp: Response{
				Code:    200,
				Props:   []message.Prop{prop("batch_001.code", "424"), prop("batch_001.message", "bad input"), prop("batch_002.code", "204")},
				Content: []message.Item{item("batch_000.data", "a"), item("batch_001.data", "{}")},
			},
			n: 3,
			want: []*splitWant{
				ok("a", map[string]string{}),
				{code: 424, message: "bad input", body: "{}", props: map[string]string{}},
				{code: 204, props: map[string]string{}},
			},
		},
		{
			name: "a code that is not a number stays a property",
			resp: Response{Code: 200, Props: []message.Prop{prop("batch_000.code", "x")}, Content: []message.Item{item("batch_000.data", "a")}},
			n:    1,
			want: []*splitWant{ok("a", map[string]string{"code": "x"})},
		},
		{
			name: "unprefixed items by position",
			resp: Response{Code: 200, Content: []message.Item{item("data", "a"), item("data", "b")}},
			n:    2,
			want: []*splitWant{ok("a", map[string]string{}), ok("b", map[string]string{})},
		},
		{
			name: "batch error applies to all",
			resp: Response{Code: 424, Message: "boom", Content: []message.Item{item("data", `{"code":424}`)}},
			n:    2,
			want: []*splitWant{
				{code: 424, message: "boom", body: `{"code":424}`, props: map[string]string{}},
				{code: 424, message: "boom", body: `{"code":424}`, props: map[string]string{}},
			},
		},
		{
			name:    "missing item",
			resp:    Response{Code: 200, Content: []message.Item{item("batch_000.data", "a"), item("batch_009.data", "z")}},
			n:       2,
			want:    []*splitWant{ok("a", map[string]string{}), nil},
			wantErr: ErrMissingItem,
		},
		{
			name:    "look-alike keys are not prefixed",
			resp:    Response{Code: 200, Content: []message.Item{item("batch_x.data", "a"), item("batch_-1.data", "b"), item("batch_1data", "c")}},
			n:       1,
			want:    []*splitWant{nil},
			wantErr: ErrMissingItem,
		},
		{name: "no requests", resp: Response{Code: 200}, n: 0, wantErr: ErrBadBatch},
		{name: "streamed reply", resp: Response{Code: 200, Streaming: true}, n: 1, wantErr: ErrBadBatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SplitBatch(&tt.resp, tt.n)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if tt.want == nil {
				return
			}
			if len(got) != len(tt.want) {
				t.Fatalf("%d responses, want %d", len(got), len(tt.want))
			}
			for i, w := range tt.want {
				checkPart(t, i, got[i], w)
			}
		})
	}
}

// splitWant is what one request's response should be.
type splitWant struct {
	code    int
	message string
	body    string
	props   map[string]string
}

func checkPart(t *testing.T, i int, got *message.Response, w *splitWant) {
	t.Helper()
	if w == nil {
		if got != nil {
			t.Errorf("item %d: got %+v, want a missing entry", i, got)
		}
		return
	}
	if got == nil {
		t.Fatalf("item %d missing", i)
	}
	if got.Code != w.code || got.Message != w.message || string(got.Body) != w.body || !reflect.DeepEqual(propMap(got.Props), w.props) {
		t.Errorf("item %d: %d %q %q %v, want %d %q %q %v", i, got.Code, got.Message, got.Body, got.Props, w.code, w.message, w.body, w.props)
	}
}

// propMap folds properties into a map, a later one winning, as the answer
// writer applies them.
func propMap(props []message.Prop) map[string]string {
	m := map[string]string{}
	for _, p := range props {
		m[p.Key] = p.Value
	}
	return m
}

// TestSplitBatchSharesProps checks that the responses of a batch share one
// slice of the batch's properties, which none of them can change for the
// others, and that a request's own properties come after the shared ones.
func TestSplitBatchSharesProps(t *testing.T) {
	resp := &Response{Code: 200,
		Props:   []message.Prop{prop("content-type", "text/plain"), prop("batch_002.x", "own")},
		Content: []message.Item{item("batch_000.data", "a"), item("batch_001.data", "b"), item("batch_002.data", "c")}}
	got, err := SplitBatch(resp, 3)
	if err != nil {
		t.Fatal(err)
	}
	if &got[0].Props[0] != &got[1].Props[0] || len(got[0].Props) != 1 || cap(got[0].Props) != 1 {
		t.Errorf("requests without properties of their own do not share one full slice: %v, %v", got[0].Props, got[1].Props)
	}
	if want := []message.Prop{prop("content-type", "text/plain"), prop("x", "own")}; !reflect.DeepEqual(got[2].Props, want) {
		t.Errorf("request 2's properties = %v, want %v", got[2].Props, want)
	}
	got[0].Props = append(got[0].Props, prop("y", "1"))
	if len(got[1].Props) != 1 || got[2].Props[1].Key != "x" {
		t.Errorf("appending to one answer's properties changed another's: %v, %v", got[1].Props, got[2].Props)
	}
	whole := &Response{Code: 200, Props: []message.Prop{prop("a", "1")}, Content: []message.Item{item("batch_0.data", "a")}}
	if got, _ := SplitBatch(whole, 1); &got[0].Props[0] != &whole.Props[0] {
		t.Error("a reply with no prefixed property was copied")
	}
}
