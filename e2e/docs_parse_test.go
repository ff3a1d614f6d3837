package e2e

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Documented examples are marked in the markdown itself, so that the docs
// stay the one place they are written: an HTML comment on the line before
// a fenced block (blank lines between are allowed),
//
//	<!-- example -->                 run it and compare the output's shape
//	<!-- example status=202 -->      every curl in it must answer 202
//	<!-- example exit=2 -->          every command in it must exit 2
//	<!-- example output=ignore -->   check the status only
//	<!-- example skip: why -->       not run here (the reason is required)
//
// In a block with "$ " prompts, each prompt line (with its "\" continuation
// lines) is a command and the lines up to the next prompt are its
// documented output; in a block without prompts every command line is run
// and only its status is checked. Without status=, a curl must answer 2xx,
// or the code of the documented error body ({"code", "type", "message"}).
// A quote left open goes on on the next line, as in a shell.
// Every fenced block that runs curl or bin/switchyard must carry a marker.

// docExample is one marked block of a markdown file.
type docExample struct {
	where    string // file:line of the fence
	status   int    // wanted HTTP status of every curl; 0: from the output, else 2xx
	exit     int    // wanted exit status of every command
	ignore   bool   // output=ignore
	skip     string // why the block is not run
	commands []docCommand
}

// docCommand is one command of an example and its documented output.
type docCommand struct {
	line   int
	text   string // as written, continuation lines joined with "\n"
	output string // "" when none is documented
}

// parseExamples reads the marked blocks of a markdown file. It also
// returns the places of fenced blocks that run commands but carry no
// marker.
func parseExamples(path string) (examples []docExample, unmarked []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, nil, err
	}
	var marker string
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimSpace(lines[i])
		switch {
		case strings.HasPrefix(trimmed, "<!-- example"):
			marker = trimmed
		case strings.HasPrefix(trimmed, "```"):
			end := closingFence(lines, i)
			block := unindent(lines[i+1:end], lines[i])
			where := fmt.Sprintf("%s:%d", path, i+1)
			if marker != "" {
				ex, err := newExample(where, marker, block, i+2)
				if err != nil {
					return nil, nil, err
				}
				examples = append(examples, ex)
			} else if runsCommands(block) {
				unmarked = append(unmarked, where)
			}
			marker, i = "", end
		case trimmed != "":
			marker = ""
		}
	}
	return examples, unmarked, nil
}

// closingFence returns the index of the fence that closes the one at open.
func closingFence(lines []string, open int) int {
	for j := open + 1; j < len(lines); j++ {
		if strings.HasPrefix(strings.TrimSpace(lines[j]), "```") {
			return j
		}
	}
	return len(lines)
}

// unindent removes the fence's own indentation from the block's lines.
func unindent(block []string, fence string) []string {
	indent := fence[:len(fence)-len(strings.TrimLeft(fence, " "))]
	out := make([]string, len(block))
	for i, l := range block {
		out[i] = strings.TrimPrefix(l, indent)
	}
	return out
}

// runsCommands reports whether a block holds a curl or switchyard command.
func runsCommands(block []string) bool {
	for _, l := range block {
		l = strings.TrimPrefix(strings.TrimSpace(l), "$ ")
		if strings.HasPrefix(l, "curl ") || strings.HasPrefix(l, "bin/switchyard ") {
			return true
		}
	}
	return false
}

// newExample reads a marker's settings and the block's commands.
func newExample(where, marker string, block []string, firstLine int) (docExample, error) {
	ex := docExample{where: where}
	body := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(marker, "<!-- example"), "-->"))
	if reason, ok := strings.CutPrefix(body, "skip:"); ok {
		ex.skip = strings.TrimSpace(reason)
		if ex.skip == "" {
			return ex, fmt.Errorf("%s: a skipped example must say why", where)
		}
		return ex, nil
	}
	for _, opt := range strings.Fields(body) {
		if err := ex.set(opt); err != nil {
			return ex, fmt.Errorf("%s: %w", where, err)
		}
	}
	ex.commands = splitCommands(block, firstLine)
	if len(ex.commands) == 0 {
		return ex, fmt.Errorf("%s: a marked block without commands", where)
	}
	return ex, nil
}

// set applies one key=value setting of a marker.
func (ex *docExample) set(opt string) error {
	key, value, _ := strings.Cut(opt, "=")
	var err error
	switch key {
	case "status":
		ex.status, err = strconv.Atoi(value)
	case "exit":
		ex.exit, err = strconv.Atoi(value)
	case "output":
		if value != "ignore" {
			err = fmt.Errorf("output=%q: only output=ignore is known", value)
		}
		ex.ignore = true
	default:
		err = fmt.Errorf("unknown marker setting %q", opt)
	}
	return err
}

// splitCommands cuts a block into commands: "$ " prompts with their output,
// or, without prompts, every line that is not blank or a comment.
func splitCommands(block []string, firstLine int) []docCommand {
	prompts := false
	for _, l := range block {
		prompts = prompts || strings.HasPrefix(l, "$ ")
	}
	var cmds []docCommand
	for i := 0; i < len(block); i++ {
		l := block[i]
		if prompts && !strings.HasPrefix(l, "$ ") || !prompts && (strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#")) {
			if prompts && len(cmds) > 0 {
				cmds[len(cmds)-1].output += l + "\n"
			}
			continue
		}
		c := docCommand{line: firstLine + i, text: strings.TrimPrefix(l, "$ ")}
		for (strings.HasSuffix(c.text, "\\") || inQuote(c.text)) && i+1 < len(block) {
			i++
			c.text += "\n" + block[i]
		}
		cmds = append(cmds, c)
	}
	return cmds
}

// inQuote reports whether a shell command ends inside a quoted string, so
// that it goes on on the next line.
func inQuote(cmd string) bool {
	var quote byte
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
		case quote == c:
			quote = 0
		case c == '\\' && quote != '\'':
			i++
		}
	}
	return quote != 0
}
