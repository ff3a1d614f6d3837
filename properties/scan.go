package properties

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// The scanner below walks a properties text the way magiconair/properties'
// lexer does, to learn what that package does not report: the line each key
// starts on, and the line of a malformed entry. It decodes keys (a key may
// hold escapes) and skips values. Loading runs it before magiconair, so
// magiconair only ever sees text it accepts.

const eof = -1

// msgNoKey is the message of an entry that has a separator but no key.
const msgNoKey = "a value with no key"

// entry is one key of a properties text and the line it starts on.
type entry struct {
	key  string
	line int
}

// scanner reads a properties text rune by rune, counting lines.
type scanner struct {
	text string
	pos  int
	line int
}

// normalize strips a UTF-8 byte order mark and turns CRLF and CR line ends
// into LF, so that lines are counted as editors count them.
func normalize(data []byte) string {
	data = bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	return strings.ReplaceAll(s, "\r", "\n")
}

// scanEntries returns the keys of text in order with their lines, or an
// ErrSyntax *Error naming file and the line of the first malformed entry.
func scanEntries(file, text string) ([]entry, error) {
	s := &scanner{text: text, line: 1}
	var entries []entry
	for {
		s.skip(" \f\t\n")
		switch s.peek() {
		case eof:
			return entries, nil
		case '#', '!':
			s.skipComment()
			continue
		}
		e, err := s.entry(file)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
}

// entry reads one key and its value.
func (s *scanner) entry(file string) (entry, error) {
	e := entry{line: s.line}
	key, msg := s.key()
	if msg == "" && key == "" {
		msg = msgNoKey
	}
	if msg != "" {
		return e, s.syntax(file, "", msg)
	}
	e.key = key
	if msg := s.value(); msg != "" {
		return e, s.syntax(file, key, msg)
	}
	return e, nil
}

func (s *scanner) syntax(file, key, msg string) error {
	return origin{file: file, line: s.line}.errorf(key, ErrSyntax, "%s", msg)
}

// next returns the next rune and moves past it.
func (s *scanner) next() rune {
	if s.pos >= len(s.text) {
		return eof
	}
	r, w := utf8.DecodeRuneInString(s.text[s.pos:])
	s.pos += w
	if r == '\n' {
		s.line++
	}
	return r
}

// peek returns the next rune without moving.
func (s *scanner) peek() rune {
	if s.pos >= len(s.text) {
		return eof
	}
	r, _ := utf8.DecodeRuneInString(s.text[s.pos:])
	return r
}

// skip moves past a run of runes from set.
func (s *scanner) skip(set string) {
	for r := s.peek(); r != eof && strings.ContainsRune(set, r); r = s.peek() {
		s.next()
	}
}

// skipComment moves past a comment line, its line end included.
func (s *scanner) skipComment() {
	for r := s.next(); r != eof && r != '\n'; r = s.next() {
	}
}

// key reads a key up to the first unescaped space, ':', '=' or line end,
// which it leaves unread. It returns the decoded key, or a message when an
// escape is malformed.
func (s *scanner) key() (string, string) {
	var b strings.Builder
	for {
		r := s.peek()
		if r == eof || strings.ContainsRune(" \f\t\n:=", r) {
			return b.String(), ""
		}
		s.next()
		if r != '\\' {
			b.WriteRune(r)
			continue
		}
		d, msg := s.escape()
		if msg != "" {
			return "", msg
		}
		b.WriteRune(d)
	}
}

// value moves past the separator and the value, continuation lines
// included. It returns a message when an escape is malformed.
func (s *scanner) value() string {
	s.skip(" \f\t")
	if r := s.peek(); r == ':' || r == '=' {
		s.next()
	}
	for {
		switch r := s.next(); {
		case r == eof || r == '\n':
			return ""
		case r == '\\' && s.peek() == '\n':
			s.next()
			s.skip(" \f\t")
		case r == '\\':
			if _, msg := s.escape(); msg != "" {
				return msg
			}
		}
	}
}

// escape decodes the rest of an escape sequence whose backslash was read.
func (s *scanner) escape() (rune, string) {
	r := s.next()
	switch r {
	case eof:
		return 0, "a backslash at the end of the file"
	case 'f':
		return '\f', ""
	case 'n':
		return '\n', ""
	case 'r':
		return '\r', ""
	case 't':
		return '\t', ""
	case 'u':
		return s.unicode()
	}
	return r, ""
}

// unicode decodes the four hex digits of a \uXXXX escape.
func (s *scanner) unicode() (rune, string) {
	var r rune
	for range 4 {
		d := s.next()
		v := strings.IndexRune("0123456789abcdef", toLowerASCII(d))
		if d == eof || v < 0 {
			return 0, `a \u escape without four hex digits`
		}
		r = r<<4 | rune(v)
	}
	return r, ""
}

func toLowerASCII(r rune) rune {
	if 'A' <= r && r <= 'F' {
		return r + 'a' - 'A'
	}
	return r
}
