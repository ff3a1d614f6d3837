package agent

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// CourseFile is the name of a course folder's one file.
const CourseFile = "course.json"

// DefaultCourse is the course the agent runs when none is named: the
// information-extraction course, whose tool is extract_structured_json.
const DefaultCourse = "extraction"

// ToolTemperature is the sampling temperature of every tool call.
const ToolTemperature = 0.1

// MaxNameLength is the longest name agent create accepts, as the hosted
// agent runtime's own tooling limits its project names.
const MaxNameLength = 23

// Errors about courses, wrapped with detail.
var (
	// ErrCourse means a course could not be found or read, or is invalid.
	ErrCourse = errors.New("agent: course")
	// ErrName means a name given to agent create is not acceptable.
	ErrName = errors.New("agent: name")
)

//go:embed courses
var builtin embed.FS

// Course is one task's tool: the name and description the reasoning model
// sees, the system prompt the small model was trained with, and its output
// limit. It is read from a folder's course.json.
type Course struct {
	// Name names the course (the folder's name when empty).
	Name string `json:"name"`
	// Tool is the tool's name in toolConfig.
	Tool string `json:"tool"`
	// Description is all the reasoning model learns about when to use the tool.
	Description string `json:"description"`
	// SystemPrompt is the system message of every tool call: the prompt the
	// small model was fine-tuned with.
	SystemPrompt string `json:"system_prompt"`
	// MaxTokens is the tool call's max_tokens: 256 for extraction and
	// classification, 512 for summarization and domain QA.
	MaxTokens int `json:"max_tokens"`
	// PlannerPrompt is the reasoning model's system prompt; it must not say
	// when to use the tool, which is the description's job.
	PlannerPrompt string `json:"planner_prompt,omitempty"`
	// Sample is the text agent verify-local sends when none is given.
	Sample string `json:"sample,omitempty"`
}

// toolName is what Bedrock accepts as a tool's name.
var toolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Validate reports the first field of c that cannot work.
func (c Course) Validate() error {
	switch {
	case !toolName.MatchString(c.Tool):
		return fmt.Errorf("%w %q: tool %q must be 1 to 64 letters, digits, _ or -", ErrCourse, c.Name, c.Tool)
	case strings.TrimSpace(c.Description) == "":
		return fmt.Errorf("%w %q: description is empty: it is the reasoning model's only guide to the tool", ErrCourse, c.Name)
	case strings.TrimSpace(c.SystemPrompt) == "":
		return fmt.Errorf("%w %q: system_prompt is empty: use the prompt the small model was trained with", ErrCourse, c.Name)
	case c.MaxTokens < 1:
		return fmt.Errorf("%w %q: max_tokens must be a positive integer (256 for extraction and classification, 512 for summarization and domain QA)", ErrCourse, c.Name)
	}
	return nil
}

// BuiltinCourses returns the names of the courses built into the binary.
func BuiltinCourses() []string {
	entries, _ := builtin.ReadDir("courses")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// LoadCourse returns the course ref names: a built-in course by name, or
// else (and always when ref holds a path separator) the course.json of the
// folder ref.
func LoadCourse(ref string) (Course, error) {
	if !strings.ContainsRune(ref, '/') && slices.Contains(BuiltinCourses(), ref) {
		b, err := builtin.ReadFile("courses/" + ref + "/" + CourseFile)
		if err != nil {
			return Course{}, fmt.Errorf("%w %q: %w", ErrCourse, ref, err)
		}
		return parseCourse(b, ref, "built-in course "+ref)
	}
	path := filepath.Join(ref, CourseFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Course{}, fmt.Errorf("%w %q: neither a built-in course (%s) nor a folder with a %s",
			ErrCourse, ref, strings.Join(BuiltinCourses(), ", "), CourseFile)
	}
	if err != nil {
		return Course{}, fmt.Errorf("%w: %w", ErrCourse, err)
	}
	return parseCourse(b, filepath.Base(filepath.Clean(ref)), path)
}

// parseCourse reads a course.json; unknown fields are errors, so a typo
// never leaves a default in place silently.
func parseCourse(b []byte, name, where string) (Course, error) {
	var c Course
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Course{}, fmt.Errorf("%w: %s: %w", ErrCourse, where, err)
	}
	if c.Name == "" {
		c.Name = name
	}
	if err := c.Validate(); err != nil {
		return Course{}, fmt.Errorf("%s: %w", where, err)
	}
	return c, nil
}

// projectName is what agent create accepts.
var projectName = regexp.MustCompile(`^[A-Za-z0-9]+$`)

// ValidName reports whether name can name a new course folder: letters
// and digits only, at most MaxNameLength characters.
func ValidName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrName)
	case !projectName.MatchString(name):
		return fmt.Errorf("%w %q: only letters and digits are allowed", ErrName, name)
	case len(name) > MaxNameLength:
		return fmt.Errorf("%w %q: %d characters, at most %d are allowed", ErrName, name, len(name), MaxNameLength)
	}
	return nil
}

// CreateCourse writes a new course folder dir/name holding template's
// course.json under the new name, and returns the file's path. It refuses
// an invalid name and a folder that already exists.
func CreateCourse(dir, name string, template Course) (string, error) {
	if err := ValidName(name); err != nil {
		return "", err
	}
	folder := filepath.Join(dir, name)
	if err := os.Mkdir(folder, 0o755); err != nil {
		return "", fmt.Errorf("%w: %w", ErrCourse, err)
	}
	template.Name = name
	b, err := json.MarshalIndent(template, "", "  ")
	if err != nil {
		return "", err
	}
	path := filepath.Join(folder, CourseFile)
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("%w: %w", ErrCourse, err)
	}
	return path, nil
}
