package agent

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestBuiltinCourses: the four shipped courses load, with the limits of
// their kind (256 tokens for extraction and classification, 512 for
// summarization and domain QA), and the default course's tool is
// extract_structured_json.
func TestBuiltinCourses(t *testing.T) {
	if got := BuiltinCourses(); !slices.Equal(got, []string{"classification", "extraction", "qa", "summarization"}) {
		t.Fatalf("built-in courses %q", got)
	}
	want := map[string]struct {
		tool      string
		maxTokens int
	}{
		"extraction": {"extract_structured_json", 256}, "classification": {"classify_language", 256},
		"summarization": {"summarize_text", 512}, "qa": {"answer_domain_question", 512},
	}
	for name, w := range want {
		c, err := LoadCourse(name)
		if err != nil {
			t.Fatal(err)
		}
		if c.Name != name || c.Tool != w.tool || c.MaxTokens != w.maxTokens || c.Sample == "" || c.PlannerPrompt == "" {
			t.Errorf("%s: %+v", name, c)
		}
		if strings.Contains(c.PlannerPrompt, c.Tool) {
			t.Errorf("%s: the planner prompt names the tool; only its description may say when to use it", name)
		}
	}
	if def, _ := LoadCourse(DefaultCourse); def.Tool != "extract_structured_json" {
		t.Errorf("the default course's tool is %q", def.Tool)
	}
}

// TestCourseFolders: create writes a folder LoadCourse reads back; names,
// existing folders and bad files are refused.
func TestCourseFolders(t *testing.T) {
	dir := t.TempDir()
	tmpl, _ := LoadCourse("classification")
	path, err := CreateCourse(dir, "Invoices2024", tmpl)
	if err != nil || path != filepath.Join(dir, "Invoices2024", CourseFile) {
		t.Fatalf("create: %q %v", path, err)
	}
	c, err := LoadCourse(filepath.Join(dir, "Invoices2024"))
	tmpl.Name = "Invoices2024"
	if err != nil || c != tmpl {
		t.Errorf("read back %+v (%v), want %+v", c, err, tmpl)
	}
	if _, err := CreateCourse(dir, "Invoices2024", tmpl); !errors.Is(err, ErrCourse) {
		t.Errorf("create over an existing folder: %v", err)
	}
	bad := map[string]string{
		"typo":      `{"tool": "x", "description": "d", "system_prompt": "s", "max_token": 256}`,
		"no tokens": `{"tool": "x", "description": "d", "system_prompt": "s"}`,
		"tool name": `{"tool": "x y", "description": "d", "system_prompt": "s", "max_tokens": 1}`,
		"no prompt": `{"tool": "x", "description": "d", "system_prompt": " ", "max_tokens": 1}`,
		"no desc":   `{"tool": "x", "description": "", "system_prompt": "s", "max_tokens": 1}`,
		"not JSON":  `tool=x`,
	}
	for name, text := range bad {
		folder := filepath.Join(dir, strings.ReplaceAll(name, " ", ""))
		if err := os.Mkdir(folder, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(folder, CourseFile), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadCourse(folder); !errors.Is(err, ErrCourse) || !strings.Contains(err.Error(), folder) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := LoadCourse("nowhere"); !errors.Is(err, ErrCourse) || !strings.Contains(err.Error(), "classification, extraction, qa, summarization") {
		t.Errorf("unknown course: %v", err)
	}
}

func TestValidName(t *testing.T) {
	for name, ok := range map[string]bool{
		"a": true, "Course7": true, strings.Repeat("x", 23): true,
		strings.Repeat("x", 24): false, "": false, "my-course": false, "my_course": false,
		"my course": false, "../x": false, "kurs\u00e9": false,
	} {
		if err := ValidName(name); (err == nil) != ok || err != nil && !errors.Is(err, ErrName) {
			t.Errorf("ValidName(%q) = %v", name, err)
		}
	}
	if _, err := CreateCourse(t.TempDir(), "bad-name", Course{}); !errors.Is(err, ErrName) {
		t.Errorf("CreateCourse with a bad name: %v", err)
	}
}
