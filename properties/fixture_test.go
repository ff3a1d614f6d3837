package properties

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// want is what a bad fixture's first line, "# want <kind> <line> <key>",
// says its error must be. Key "-" means the error names no key.
type want struct {
	sentinel error
	line     int
	key      string
}

func readWant(t *testing.T, file string) want {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(normalize(data), "\n")
	f := strings.Fields(first)
	if len(f) != 5 || f[0] != "#" || f[1] != "want" {
		t.Fatalf("%s: first line %q is not \"# want <kind> <line> <key>\"", file, first)
	}
	line, err := strconv.Atoi(f[3])
	if err != nil {
		t.Fatalf("%s: line %q: %v", file, f[3], err)
	}
	w := want{sentinel: map[string]error{"syntax": ErrSyntax, "invalid": ErrInvalid}[f[2]], line: line, key: f[4]}
	if w.key == "-" {
		w.key = ""
	}
	return w
}

// checkWant asserts that err is an *Error at file:line about key.
func checkWant(t *testing.T, err error, file string, w want) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not an *Error", err, err)
	}
	if !errors.Is(err, w.sentinel) {
		t.Errorf("error %v does not wrap %v", err, w.sentinel)
	}
	if e.File != file || e.Line != w.line || e.Key != w.key {
		t.Errorf("error at %s:%d key %q, want %s:%d key %q", e.File, e.Line, e.Key, file, w.line, w.key)
	}
	if !strings.Contains(err.Error(), file+":"+strconv.Itoa(w.line)+":") {
		t.Errorf("message %q does not name %s:%d", err, file, w.line)
	}
}

// golden compares v, as indented JSON with machine-specific paths replaced,
// with the file; -update rewrites the file.
func golden(t *testing.T, file string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(scrubPaths(t, got), '\n')
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wantData, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, wantData) {
		t.Errorf("%s differs from the loaded value (rerun with -update and review the diff):\n%s", file, got)
	}
}

// scrubPaths replaces the absolute testdata folder, the working directory
// and the temp dir with placeholders.
func scrubPaths(t *testing.T, b []byte) []byte {
	t.Helper()
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	r := strings.NewReplacer(testdata, "$TESTDATA", workDir(), "$CWD", os.TempDir(), "$TMPDIR")
	return []byte(r.Replace(string(b)))
}

// modelView is what a model golden file holds: the struct and what the
// rest of the server derives from it.
type modelView struct {
	Model         *Model
	GPUWorkers    [2]int
	CPUWorkers    [2]int
	WantsCPUGroup bool
	WorkerProps   []Prop
}

func viewModel(m *Model) modelView {
	v := modelView{Model: m, WantsCPUGroup: m.WantsCPUGroup(), WorkerProps: m.WorkerProps()}
	v.GPUWorkers[0], v.GPUWorkers[1] = m.GPUWorkers()
	v.CPUWorkers[0], v.CPUWorkers[1] = m.CPUWorkers()
	return v
}

func TestLoadModelGood(t *testing.T) {
	dirs, err := filepath.Glob("testdata/models/good/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		if filepath.Ext(dir) == ".json" {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			m, err := LoadModel(dir, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, dir+".json", viewModel(m))
		})
	}
}

func TestLoadModelBad(t *testing.T) {
	dirs, err := filepath.Glob("testdata/models/bad/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			file, err := filepath.Abs(filepath.Join(dir, ModelFile))
			if err != nil {
				t.Fatal(err)
			}
			w := readWant(t, file)
			m, err := LoadModel(dir, nil, nil)
			if err == nil {
				t.Fatalf("loaded %+v, want an error", m)
			}
			checkWant(t, err, file, w)
		})
	}
}

// serverView is what a server golden file holds.
type serverView struct {
	Server           *Server
	InferenceListen  string
	ManagementListen string
	SharedListener   bool
}

func viewServer(t *testing.T, s *Server) serverView {
	t.Helper()
	inf, err := s.InferenceListen()
	if err != nil {
		t.Fatal(err)
	}
	mgmt, err := s.ManagementListen()
	if err != nil {
		t.Fatal(err)
	}
	return serverView{Server: s, InferenceListen: inf, ManagementListen: mgmt, SharedListener: s.SharedListener()}
}

func TestLoadServerGood(t *testing.T) {
	files, err := filepath.Glob("testdata/server/*.good.properties")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			s, err := LoadServer(file, nil)
			if err != nil {
				t.Fatal(err)
			}
			golden(t, strings.TrimSuffix(file, ".properties")+".json", viewServer(t, s))
		})
	}
}

func TestLoadServerBad(t *testing.T) {
	files, err := filepath.Glob("testdata/server/*.bad.properties")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			abs, err := filepath.Abs(file)
			if err != nil {
				t.Fatal(err)
			}
			w := readWant(t, abs)
			s, err := LoadServer(file, nil)
			if err == nil {
				t.Fatalf("loaded %+v, want an error", s)
			}
			checkWant(t, err, abs, w)
		})
	}
}
