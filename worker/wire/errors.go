package wire

import "errors"

// Sentinel errors of the codec. Errors returned by this package wrap one of
// them with details.
var (
	// ErrTooLong means a string is longer than the 2 GiB - 1 bytes that its
	// int32 length can say.
	ErrTooLong = errors.New("wire: string too long")
	// ErrTooMany means a list holds more than the 32767 entries that its int16
	// count can say.
	ErrTooMany = errors.New("wire: too many entries")
	// ErrTooLarge means an item is larger than the reader's cap, or than an
	// int32 length can say.
	ErrTooLarge = errors.New("wire: item too large")
	// ErrBadCode means a status code does not fit in an int16.
	ErrBadCode = errors.New("wire: status code out of range")
	// ErrMalformed means a frame breaks the layout: a negative length or
	// count, or an unknown chunk marker.
	ErrMalformed = errors.New("wire: malformed frame")
	// ErrTruncated means the input ended inside a frame. It is returned
	// together with io.ErrUnexpectedEOF.
	ErrTruncated = errors.New("wire: truncated frame")
	// ErrBadBatch means a batch cannot be split: no items were asked for, or
	// the reply is a stream.
	ErrBadBatch = errors.New("wire: bad batch")
	// ErrMissingItem means a batch reply holds no content for some request.
	ErrMissingItem = errors.New("wire: batch reply lacks an item")
)
