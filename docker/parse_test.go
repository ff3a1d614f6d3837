package docker

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// This file reads Dockerfiles and .dockerignore files just far enough to
// check the contract; it is not a full Dockerfile parser (no heredocs, no
// escape directive, no variable substitution beyond global ARG defaults).

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	line int    // first line, from 1
	cmd  string // keyword in upper case: FROM, RUN, ...
	args string // the rest, without the continuation backslashes
}

// stage is one FROM and the instructions up to the next.
type stage struct {
	base  string // the image, global ARG defaults substituted
	name  string // after AS; "" when none
	flags []string
	body  []instruction
}

// dockerfile is a parsed Dockerfile.
type dockerfile struct {
	globalArgs map[string]string // ARGs before the first FROM, with defaults
	stages     []stage
}

// parseInstructions splits src into instructions. Comment lines and blank
// lines are skipped, also inside a continued instruction, as Docker does.
func parseInstructions(src string) []instruction {
	var out []instruction
	var cur strings.Builder
	start := 0
	for i, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if start == 0 {
			start = i + 1
		}
		body, more := strings.CutSuffix(strings.TrimRight(line, " \t\r"), `\`)
		cur.WriteString(body)
		if more {
			cur.WriteString(" ")
			continue
		}
		out = appendInstruction(out, start, cur.String())
		cur.Reset()
		start = 0
	}
	if start != 0 {
		out = appendInstruction(out, start, cur.String())
	}
	return out
}

// appendInstruction adds the instruction text starts to out; text that is
// only white space (a lone continuation backslash) adds nothing.
func appendInstruction(out []instruction, line int, text string) []instruction {
	text = strings.TrimSpace(text)
	cmd, args := text, ""
	if i := strings.IndexFunc(text, unicode.IsSpace); i >= 0 {
		cmd, args = text[:i], text[i:]
	}
	if cmd == "" {
		return out
	}
	return append(out, instruction{line: line, cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args)})
}

// parseDockerfile groups src's instructions into stages.
func parseDockerfile(src string) dockerfile {
	d := dockerfile{globalArgs: map[string]string{}}
	for _, in := range parseInstructions(src) {
		switch {
		case in.cmd == "FROM":
			d.stages = append(d.stages, d.newStage(in.args))
		case len(d.stages) == 0 && in.cmd == "ARG":
			name, def, _ := strings.Cut(in.args, "=")
			d.globalArgs[name] = strings.Trim(def, `"`)
		case len(d.stages) > 0:
			last := &d.stages[len(d.stages)-1]
			last.body = append(last.body, in)
		}
	}
	return d
}

func (d dockerfile) newStage(args string) stage {
	var s stage
	words := splitWords(args)
	for i := 0; i < len(words); i++ {
		switch w := words[i]; {
		case strings.HasPrefix(w, "--"):
			s.flags = append(s.flags, w)
		case strings.EqualFold(w, "AS") && i+1 < len(words):
			s.name = words[i+1]
			i++
		default:
			s.base = os.Expand(w, func(k string) string { return d.globalArgs[k] })
		}
	}
	return s
}

// find returns the instructions of s with keyword cmd.
func (s stage) find(cmd string) []instruction {
	var out []instruction
	for _, in := range s.body {
		if in.cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

// labels returns the key=value pairs of s's LABEL instructions.
func (s stage) labels() map[string]string {
	out := map[string]string{}
	for _, in := range s.find("LABEL") {
		for _, w := range splitWords(in.args) {
			k, v, _ := strings.Cut(w, "=")
			out[k] = v
		}
	}
	return out
}

// env returns the key=value pairs of s's ENV instructions (the later of
// two wins, as in the image), quotes removed.
func (s stage) env() map[string]string {
	out := map[string]string{}
	for _, in := range s.find("ENV") {
		for _, w := range splitWords(in.args) {
			k, v, _ := strings.Cut(w, "=")
			out[k] = v
		}
	}
	return out
}

// argLine returns the line of s's first ARG that declares name, or 0.
func (s stage) argLine(name string) int {
	line, _ := s.arg(name)
	return line
}

// arg returns the line of s's first ARG that declares name (0 when none)
// and its default, quotes removed.
func (s stage) arg(name string) (int, string) {
	for _, in := range s.find("ARG") {
		if n, def, _ := strings.Cut(in.args, "="); n == name {
			return in.line, strings.Trim(def, `"`)
		}
	}
	return 0, ""
}

// splitWords splits s at white space outside single or double quotes and
// removes the quotes, as the shell and Dockerfile key=value lists do.
func splitWords(s string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	inWord := false
	for i, r := range s {
		_, size := utf8.DecodeRuneInString(s[i:])
		raw := s[i : i+size] // the bytes as written, also when they are not UTF-8
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteString(raw)
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case unicode.IsSpace(r):
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteString(raw)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// ignoreRule is one line of a .dockerignore file.
type ignoreRule struct {
	re     *regexp.Regexp
	negate bool
}

// parseIgnore reads .dockerignore patterns: one per line, # comments,
// "!" to re-include, "*" and "?" within a path element, "**" across them.
func parseIgnore(src string) []ignoreRule {
	var out []ignoreRule
	for line := range strings.Lines(src) {
		p := strings.TrimSpace(line)
		if p == "" || strings.HasPrefix(p, "#") {
			continue
		}
		neg := strings.HasPrefix(p, "!")
		p = strings.Trim(strings.TrimPrefix(p, "!"), "/")
		if p == "" {
			continue
		}
		out = append(out, ignoreRule{re: regexp.MustCompile("^" + globRegexp(p) + "$"), negate: neg})
	}
	return out
}

// globRegexp turns a pattern into a regular expression over slash paths.
func globRegexp(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch {
		case strings.HasPrefix(p[i:], "**/"):
			b.WriteString("(.*/)?")
			i += 2
		case strings.HasPrefix(p[i:], "**"):
			b.WriteString(".*")
			i++
		case p[i] == '*':
			b.WriteString("[^/]*")
		case p[i] == '?':
			b.WriteString("[^/]")
		default:
			r, size := utf8.DecodeRuneInString(p[i:])
			b.WriteString(regexp.QuoteMeta(string(r)))
			i += size - 1
		}
	}
	return b.String()
}

// ignored tells whether rules leave path (slash-separated, relative to the
// context) out of the build context: the last rule that matches the path or
// one of its parent folders decides.
func ignored(rules []ignoreRule, path string) bool {
	out := false
	for _, r := range rules {
		for p := path; p != "." && p != ""; p = parentDir(p) {
			if r.re.MatchString(p) {
				out = !r.negate
				break
			}
		}
	}
	return out
}

func parentDir(p string) string {
	i := strings.LastIndex(p, "/")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// readFile returns the text of name, failing the test when it cannot.
func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
