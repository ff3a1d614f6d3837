package message

// Prop is one request or response property (an HTTP header, for instance)
// as the wire carries it.
type Prop struct {
	Key   string
	Value string
}

// Item is one named piece of request content ("data" for the body).
type Item struct {
	Key   string
	Value []byte
}

// Input is a request as a worker receives it: properties and named content.
type Input struct {
	Props   []Prop
	Content []Item
}

// Response is a worker's answer to one job. When Stream is not nil the body
// arrives as chunks on it and Body is empty.
//
// Props are the worker's response properties in the order they came; a
// later one of the same name wins over an earlier one. The answers to the
// requests of one dynamic batch share the batch's properties: Props is
// read-only, and must not be changed or appended to in place.
type Response struct {
	Code    int
	Message string
	Props   []Prop
	Body    []byte
	Stream  *Stream
}

// Prop returns the value of the last property named key, and whether there
// is one.
func (r *Response) Prop(key string) (string, bool) {
	for i := len(r.Props) - 1; i >= 0; i-- {
		if r.Props[i].Key == key {
			return r.Props[i].Value, true
		}
	}
	return "", false
}
