package wire

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/switchyard/switchyard/batching"
)

const (
	batchKeyPrefix = "batch_"
	itemCodeKey    = "code"
	itemMessageKey = "message"
	maxIndexDigits = 6
)

// part collects one request's share of a batch reply.
type part struct {
	props   map[string]string
	items   []batching.Item
	code    int
	message string
	ownCode bool
}

// SplitBatch splits the reply to a dynamic batch of n requests into n
// responses, in request order.
//
// Content items keyed batch_<i>.<key> (padded or not) belong to request i; its
// body is the item keyed "data", or else its first item. When no item is
// prefixed and the reply holds exactly n items, they are taken in order.
// Properties prefixed batch_<i>. belong to request i and win over unprefixed
// ones, which belong to every request; batch_<i>.code and batch_<i>.message
// give request i its own status. A reply code of 300 or more applies to every
// request. Items for indexes n and above are dropped.
//
// A request the reply says nothing about (no content and no code of its own)
// gets a nil entry, and the error, wrapping ErrMissingItem, lists them; the
// other entries are still valid.
func SplitBatch(resp *Response, n int) ([]*batching.Response, error) {
	if n <= 0 || n > MaxCount {
		return nil, fmt.Errorf("%w: %d requests", ErrBadBatch, n)
	}
	if resp.Streaming {
		return nil, fmt.Errorf("%w: a streamed reply cannot be split", ErrBadBatch)
	}
	parts := newParts(resp, n)
	splitProps(parts, resp.Props)
	shared := splitContent(parts, resp.Content)
	if resp.Code >= 300 {
		return failAll(parts, resp, shared), nil
	}
	return collect(parts)
}

func newParts(resp *Response, n int) []*part {
	parts := make([]*part, n)
	for i := range parts {
		parts[i] = &part{props: map[string]string{}, code: resp.Code, message: resp.Message}
	}
	return parts
}

// parseBatchKey splits "batch_<i>.<rest>" into i and rest.
func parseBatchKey(key string) (int, string, bool) {
	s, ok := strings.CutPrefix(key, batchKeyPrefix)
	if !ok {
		return 0, "", false
	}
	digits, rest, ok := strings.Cut(s, ".")
	if !ok || digits == "" || len(digits) > maxIndexDigits {
		return 0, "", false
	}
	i, err := strconv.Atoi(digits)
	if err != nil || digits[0] == '+' || digits[0] == '-' {
		return 0, "", false
	}
	return i, rest, true
}

func splitProps(parts []*part, props []batching.Prop) {
	for _, p := range props {
		if _, _, ok := parseBatchKey(p.Key); !ok {
			for _, pt := range parts {
				pt.props[p.Key] = p.Value
			}
		}
	}
	for _, p := range props {
		i, key, ok := parseBatchKey(p.Key)
		if ok && i < len(parts) {
			parts[i].setProp(key, p.Value)
		}
	}
}

func (pt *part) setProp(key, value string) {
	switch key {
	case itemCodeKey:
		if code, err := strconv.Atoi(value); err == nil {
			pt.code, pt.ownCode = code, true
			return
		}
	case itemMessageKey:
		pt.message = value
		return
	}
	pt.props[key] = value
}

// splitContent hands prefixed items to their requests and returns the
// unprefixed ones, after mapping them by position when that is the reading.
func splitContent(parts []*part, items []batching.Item) []batching.Item {
	var shared []batching.Item
	prefixed := false
	for _, it := range items {
		i, key, ok := parseBatchKey(it.Key)
		switch {
		case !ok:
			shared = append(shared, it)
		case i < len(parts):
			prefixed = true
			parts[i].items = append(parts[i].items, batching.Item{Key: key, Value: it.Value})
		default:
			prefixed = true
		}
	}
	if !prefixed && len(shared) == len(parts) {
		for i, it := range shared {
			parts[i].items = []batching.Item{it}
		}
	}
	return shared
}

func failAll(parts []*part, resp *Response, shared []batching.Item) []*batching.Response {
	out := make([]*batching.Response, len(parts))
	for i, pt := range parts {
		b := body(pt.items)
		if b == nil {
			b = body(shared)
		}
		out[i] = &batching.Response{Code: resp.Code, Message: resp.Message, Props: pt.props, Body: b}
	}
	return out
}

func collect(parts []*part) ([]*batching.Response, error) {
	out := make([]*batching.Response, len(parts))
	var missing []int
	for i, pt := range parts {
		if len(pt.items) == 0 && !pt.ownCode {
			missing = append(missing, i)
			continue
		}
		out[i] = &batching.Response{Code: pt.code, Message: pt.message, Props: pt.props, Body: body(pt.items)}
	}
	if missing != nil {
		return out, fmt.Errorf("%w: requests %v of %d", ErrMissingItem, missing, len(parts))
	}
	return out, nil
}
