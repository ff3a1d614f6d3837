package properties

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Sentinel errors. Every *Error wraps one of ErrSyntax, ErrInvalid and
// ErrFile.
var (
	// ErrSyntax means a line of a properties file cannot be read.
	ErrSyntax = errors.New("properties: syntax error")
	// ErrInvalid means a value has the wrong type or is out of range.
	ErrInvalid = errors.New("properties: invalid value")
	// ErrFile means a properties file cannot be used: it is not a regular
	// file (a device, a named pipe, a folder), is larger than MaxFileSize,
	// or cannot be read.
	ErrFile = errors.New("properties: unusable file")
	// ErrNoModelDir means the folder given to LoadModel is missing or is not
	// a folder.
	ErrNoModelDir = errors.New("properties: not a model folder")
)

// Error is a problem with one setting. It says where the value was written:
// File and Line for a file (Line is 0 when the line is not known), Env for
// an environment variable, or Flag for a command-line flag (which the
// loaders never set: a command that passes its flags on as environment
// variables names the flag instead).
type Error struct {
	File string // the properties file
	Line int    // 1-based line of the key in File; 0 when unknown
	Env  string // the environment variable the value came from, if any
	Flag string // the command-line flag the value came from, if any
	Key  string // the key, in its properties-file spelling
	Msg  string // what is wrong
	Err  error  // ErrSyntax, ErrInvalid or ErrFile
}

// Error formats e as "properties: <where>: <key>: <msg>".
func (e *Error) Error() string {
	s := "properties: "
	if where := e.where(); where != "" {
		s += where + ": "
	}
	if e.Key != "" {
		s += keyText(e.Key) + ": "
	}
	return s + e.Msg
}

func (e *Error) where() string {
	switch {
	case e.Flag != "":
		return e.Flag
	case e.Env != "":
		return "$" + e.Env
	case e.File != "" && e.Line > 0:
		return e.File + ":" + strconv.Itoa(e.Line)
	}
	return e.File
}

// Unwrap returns the sentinel error e wraps.
func (e *Error) Unwrap() error { return e.Err }

// origin is where a value was written: a file line or an environment variable.
type origin struct {
	file string
	line int
	env  string
}

// errorf returns an *Error at o about key.
func (o origin) errorf(key string, sentinel error, format string, args ...any) *Error {
	return &Error{File: o.file, Line: o.line, Env: o.env, Key: key, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

// invalidf returns an ErrInvalid *Error about key with no location yet.
func invalidf(key, format string, args ...any) *Error {
	return origin{}.errorf(key, ErrInvalid, format, args...)
}

// locate fills in where the value of the key err is about was written, when
// err is an *Error without a location. file is used when key has no origin.
func locate(err error, file string, at map[string]origin) error {
	var e *Error
	if !errors.As(err, &e) || e.File != "" || e.Env != "" {
		return err
	}
	o, ok := at[e.Key]
	if !ok {
		o = origin{file: file}
	}
	e.File, e.Line, e.Env = o.file, o.line, o.env
	return e
}

// maxQuote is how many bytes of a value or key an error message shows.
const maxQuote = 64

// quote returns s escaped in double quotes for an error message, cut after
// maxQuote bytes, so that a huge or binary value does not fill the message.
func quote(s string) string {
	if len(s) <= maxQuote {
		return strconv.Quote(s)
	}
	return strconv.Quote(strings.ToValidUTF8(s[:maxQuote], "")) + "..."
}

// keyText is a key as an error message shows it: as it is when it is short
// and printable, else quoted.
func keyText(key string) string {
	if len(key) <= maxQuote && strconv.CanBackquote(key) && !strings.ContainsAny(key, " `") {
		return key
	}
	return quote(key)
}
