package wire

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/switchyard/switchyard/message"
)

const (
	batchKeyPrefix = "batch_"
	itemCodeKey    = "code"
	itemMessageKey = "message"
	maxIndexDigits = 6
)

// part collects one request's share of a batch reply.
type part struct {
	own     []message.Prop // its batch_<i>.<key> properties, prefix cut
	body    []byte         // its item keyed data, else its first item
	hasBody bool
	isData  bool // body is the item keyed data
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
// The unprefixed properties are one slice that every response shares (the
// reply's own when none is prefixed): a response's Props is that slice, or
// a copy of it followed by the request's own properties. No map is built.
//
// A request the reply says nothing about (no content and no code of its own)
// gets a nil entry, and the error, wrapping ErrMissingItem, lists them; the
// other entries are still valid.
func SplitBatch(resp *Response, n int) ([]*message.Response, error) {
	if n <= 0 || n > MaxCount {
		return nil, fmt.Errorf("%w: %d requests", ErrBadBatch, n)
	}
	if resp.Streaming {
		return nil, fmt.Errorf("%w: a streamed reply cannot be split", ErrBadBatch)
	}
	parts := make([]part, n)
	for i := range parts {
		parts[i].code, parts[i].message = resp.Code, resp.Message
	}
	shared := splitProps(parts, resp.Props)
	sharedBody := splitContent(parts, resp.Content)
	if resp.Code >= 300 {
		return failAll(parts, resp, shared, sharedBody), nil
	}
	return collect(parts, shared)
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

// splitProps gives each part its prefixed properties and returns the
// unprefixed ones: props itself when none is prefixed.
func splitProps(parts []part, props []message.Prop) []message.Prop {
	shared, prefixed := props, false
	for i, p := range props {
		j, key, ok := parseBatchKey(p.Key)
		if !ok {
			if prefixed {
				shared = append(shared, p)
			}
			continue
		}
		if !prefixed {
			prefixed, shared = true, slices.Clone(props[:i])
		}
		if j < len(parts) {
			parts[j].setProp(key, p.Value)
		}
	}
	return shared[:len(shared):len(shared)]
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
	pt.own = append(pt.own, message.Prop{Key: key, Value: value})
}

// take notes one of the part's items: the first, unless data comes later.
func (pt *part) take(key string, value []byte) {
	if !pt.hasBody || (key == DataKey && !pt.isData) {
		pt.body, pt.hasBody, pt.isData = value, true, key == DataKey
	}
}

// splitContent hands prefixed items to their requests and returns the body
// of the unprefixed ones, after mapping them by position when that is the
// reading.
func splitContent(parts []part, items []message.Item) []byte {
	var shared part
	unprefixed, prefixed := 0, false
	for _, it := range items {
		i, key, ok := parseBatchKey(it.Key)
		switch {
		case !ok:
			shared.take(it.Key, it.Value)
			unprefixed++
		case i < len(parts):
			prefixed = true
			parts[i].take(key, it.Value)
		default:
			prefixed = true
		}
	}
	if !prefixed && unprefixed == len(parts) {
		for i, it := range items {
			parts[i].body, parts[i].hasBody = it.Value, true
		}
	}
	return shared.body
}

// props returns a part's properties: shared, then its own.
func (pt *part) props(shared []message.Prop) []message.Prop {
	if len(pt.own) == 0 {
		return shared
	}
	return append(shared, pt.own...) // shared's capacity is its length: a copy
}

func failAll(parts []part, resp *Response, shared []message.Prop, sharedBody []byte) []*message.Response {
	all := make([]message.Response, len(parts))
	out := make([]*message.Response, len(parts))
	for i := range parts {
		pt := &parts[i]
		b := pt.body
		if !pt.hasBody {
			b = sharedBody
		}
		all[i] = message.Response{Code: resp.Code, Message: resp.Message, Props: pt.props(shared), Body: b}
		out[i] = &all[i]
	}
	return out
}

func collect(parts []part, shared []message.Prop) ([]*message.Response, error) {
	all := make([]message.Response, len(parts))
	out := make([]*message.Response, len(parts))
	var missing []int
	for i := range parts {
		pt := &parts[i]
		if !pt.hasBody && !pt.ownCode {
			missing = append(missing, i)
			continue
		}
		all[i] = message.Response{Code: pt.code, Message: pt.message, Props: pt.props(shared), Body: pt.body}
		out[i] = &all[i]
	}
	if missing != nil {
		return out, fmt.Errorf("%w: requests %v of %d", ErrMissingItem, missing, len(parts))
	}
	return out, nil
}
