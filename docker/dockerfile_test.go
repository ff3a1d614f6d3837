package docker

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// image is what one Dockerfile must build.
type image struct {
	file     string
	base     string   // prefix of the runtime stage's base image
	packages []string // words that must appear in the runtime stage's RUN lines
}

var images = []image{
	{"Dockerfile", "debian:bookworm-slim", []string{"python3", "python3-venv", "tini"}},
	{"Dockerfile.gpu", "nvidia/cuda:", []string{"python3", "python3-venv", "tini"}},
}

// Where the images put the server, the entrypoint and the workers' Python:
// a virtual environment holding the project's pinned stack, whose
// interpreter is the entrypoint's default python_executable, with the
// requirement files it was filled from.
const (
	serverPath      = "/usr/local/bin/switchyard"
	entrypointPath  = "/usr/local/bin/switchyard-entrypoint"
	venvDir         = "/opt/switchyard/venv"
	imagePython     = venvDir + "/bin/python"
	requirementsDir = "/opt/switchyard/requirements"
)

func TestDockerfiles(t *testing.T) {
	for _, img := range images {
		d := parseDockerfile(readFile(t, img.file))
		for name, problems := range contractChecks(img, d) {
			t.Run(img.file+"/"+name, func(t *testing.T) {
				for _, p := range problems {
					t.Error(p)
				}
			})
		}
	}
}

// report collects the problems one check finds.
type report []string

func (r *report) addf(format string, args ...any) { *r = append(*r, fmt.Sprintf(format, args...)) }

// contractChecks runs every check on an image's Dockerfile and returns the
// problems of each check by name.
func contractChecks(img image, d dockerfile) map[string]report {
	if len(d.stages) < 2 {
		return map[string]report{"stages": {fmt.Sprintf("%d stages, want a builder and a runtime stage", len(d.stages))}}
	}
	build, run := d.stages[0], d.stages[len(d.stages)-1]
	return map[string]report{
		"builder":      checkBuilder(build),
		"go build":     checkGoBuild(build),
		"runtime base": checkBase(run, img.base),
		"labels":       checkLabels(run),
		"packages":     checkPackages(run, img.packages),
		"stack":        checkStack(run),
		"files":        checkFiles(run),
		"entrypoint":   checkEntrypoint(run),
		"user":         checkUser(run),
		"port":         checkPort(run),
	}
}

// checkBuilder: the Go image named in the contract, on the build platform.
func checkBuilder(s stage) report {
	var r report
	if s.base != "golang:1.26-bookworm" || s.name != "builder" {
		r.addf("first stage FROM %q AS %q, want golang:1.26-bookworm AS builder", s.base, s.name)
	}
	if !slices.Contains(s.flags, "--platform=$BUILDPLATFORM") {
		r.addf("builder flags %q lack --platform=$BUILDPLATFORM (cross-compile, no emulation)", s.flags)
	}
	return r
}

// goBuildFlags must all appear in the builder's go build command.
var goBuildFlags = []string{"CGO_ENABLED=1", "GOARCH=$TARGETARCH", "GOOS=$TARGETOS",
	"-X main.version=${VERSION}", "-X main.commit=${GIT_COMMIT}", "./cmd/switchyard", "-o /out/switchyard"}

// checkGoBuild: cgo on, the target platform, version and commit stamped,
// and the build arguments declared before the build uses them.
func checkGoBuild(s stage) report {
	var r report
	var build *instruction
	for _, in := range s.find("RUN") {
		if strings.Contains(in.args, "go build") {
			build = &in
		}
	}
	if build == nil {
		r.addf("no RUN with go build in the builder")
		return r
	}
	for _, want := range goBuildFlags {
		if !strings.Contains(build.args, want) {
			r.addf("go build (line %d) lacks %q", build.line, want)
		}
	}
	for _, arg := range []string{"TARGETARCH", "TARGETOS", "VERSION", "GIT_COMMIT"} {
		if l := s.argLine(arg); l == 0 || l > build.line {
			r.addf("ARG %s not declared in the builder before line %d", arg, build.line)
		}
	}
	return r
}

func checkBase(s stage, prefix string) report {
	var r report
	if !strings.HasPrefix(s.base, prefix) {
		r.addf("runtime stage FROM %q, want %s...", s.base, prefix)
	}
	return r
}

// wantLabels are the runtime stage's required labels.
var wantLabels = map[string]string{
	"com.amazonaws.sagemaker.capabilities.accept-bind-to-port": "true",
	"com.amazonaws.sagemaker.capabilities.multi-models":        "true",
	"org.opencontainers.image.version":                         "${VERSION}",
	"org.opencontainers.image.revision":                        "${GIT_COMMIT}",
}

// checkLabels: the SageMaker capabilities and the OCI version labels, with
// their build arguments declared in the stage so they are not empty.
func checkLabels(s stage) report {
	var r report
	got := s.labels()
	for k, v := range wantLabels {
		if got[k] != v {
			r.addf("LABEL %s=%q, want %q", k, got[k], v)
		}
	}
	label := s.find("LABEL")
	for _, arg := range []string{"VERSION", "GIT_COMMIT"} {
		if l := s.argLine(arg); l == 0 || len(label) == 0 || l > label[0].line {
			r.addf("ARG %s not declared in the runtime stage before its LABEL", arg)
		}
	}
	return r
}

func checkPackages(s stage, packages []string) report {
	var r report
	words := runWords(s)
	for _, p := range packages {
		if !slices.Contains(words, p) {
			r.addf("runtime stage installs no %s", p)
		}
	}
	return r
}

// stackArgs are the build arguments of the workers' stack, with the
// defaults that give the pinned stack from PyPI.
var stackArgs = map[string]string{"WITH_TRANSFORMERS": "true", "TORCH_INDEX_URL": ""}

// stackInstall must all appear in the RUN that makes the virtual
// environment: made from the image's python3, worker.txt installed against
// the lock, torch alone from TORCH_INDEX_URL when it is set, and numpy alone
// (at its pinned version) for WITH_TRANSFORMERS=false.
var stackInstall = []string{
	"req=" + requirementsDir,
	`/usr/bin/python3 -m venv "$VIRTUAL_ENV"`,
	`install -r "$req/worker.txt" -c "$req/constraints.txt"`,
	`install --no-deps --index-url "$TORCH_INDEX_URL" -c "$req/constraints.txt" torch`,
	`install -c "$req/constraints.txt" numpy`,
	"$pip check",
}

// checkStack: the workers' Python is a virtual environment at venvDir,
// first on PATH, filled from the copied requirements/worker.txt and
// requirements/constraints.txt, with its build arguments declared (at their
// defaults) before the RUN that reads them.
func checkStack(s stage) report {
	var r report
	env := s.env()
	if env["VIRTUAL_ENV"] != venvDir {
		r.addf("ENV VIRTUAL_ENV=%q, want %s", env["VIRTUAL_ENV"], venvDir)
	}
	if !strings.HasPrefix(env["PATH"], venvDir+"/bin:") {
		r.addf("ENV PATH=%q, want %s/bin first", env["PATH"], venvDir)
	}
	r = append(r, checkCopies(s, "requirements/worker.txt requirements/constraints.txt "+requirementsDir+"/")...)
	install := stackRun(s)
	if install == nil {
		r.addf(`no RUN that makes the virtual environment ("-m venv")`)
		return r
	}
	for _, want := range stackInstall {
		if !strings.Contains(install.args, want) {
			r.addf("the stack's RUN (line %d) lacks %q", install.line, want)
		}
	}
	for arg, def := range stackArgs {
		line, got := s.arg(arg)
		switch {
		case line == 0 || line > install.line:
			r.addf("ARG %s not declared before line %d", arg, install.line)
		case got != def:
			r.addf("ARG %s defaults to %q, want %q", arg, got, def)
		}
	}
	return r
}

// stackRun returns the RUN of s that makes the virtual environment, or nil.
func stackRun(s stage) *instruction {
	for _, in := range s.find("RUN") {
		if strings.Contains(in.args, "-m venv") {
			return &in
		}
	}
	return nil
}

// checkFiles: the server from the builder, the entrypoint from docker/.
func checkFiles(s stage) report {
	return checkCopies(s, "--from=builder /out/switchyard "+serverPath, "--chmod=0755 docker/entrypoint.sh "+entrypointPath)
}

// checkCopies: each of want (a COPY's words, quotes removed) is a COPY of s.
func checkCopies(s stage, want ...string) report {
	var r report
	copies := map[string]bool{}
	for _, in := range s.find("COPY") {
		copies[strings.Join(splitWords(in.args), " ")] = true
	}
	for _, w := range want {
		if !copies[w] {
			r.addf("no COPY %s in the runtime stage", w)
		}
	}
	return r
}

// checkEntrypoint: tini as PID 1 runs the script, whose default is serve.
func checkEntrypoint(s stage) report {
	var r report
	want := map[string][]string{
		"ENTRYPOINT": {"/usr/bin/tini", "--", entrypointPath},
		"CMD":        {"serve"},
	}
	for cmd, w := range want {
		ins := s.find(cmd)
		if len(ins) != 1 {
			r.addf("%d %s instructions, want 1", len(ins), cmd)
			continue
		}
		var got []string
		if err := json.Unmarshal([]byte(ins[0].args), &got); err != nil {
			r.addf("%s %s is not the exec (JSON) form: %v", cmd, ins[0].args, err)
		} else if !slices.Equal(got, w) {
			r.addf("%s %q, want %q", cmd, got, w)
		}
	}
	return r
}

// checkUser: a numeric non-root user, which Kubernetes' runAsNonRoot can
// verify without reading /etc/passwd.
func checkUser(s stage) report {
	var r report
	users := s.find("USER")
	if len(users) == 0 {
		r.addf("the runtime stage runs as root: no USER")
		return r
	}
	last := users[len(users)-1].args
	user, _, _ := strings.Cut(last, ":")
	if user == "" || user == "root" || strings.Trim(user, "0") == "" || strings.Trim(user, "0123456789") != "" {
		r.addf("USER %q, want a numeric non-root uid", last)
	}
	return r
}

func checkPort(s stage) report {
	var r report
	if ex := s.find("EXPOSE"); len(ex) != 1 || ex[0].args != "8080" {
		r.addf("EXPOSE %v, want exactly 8080", ex)
	}
	return r
}

// TestDockerfileBuildersMatch: the two images build the server the same way.
func TestDockerfileBuildersMatch(t *testing.T) {
	cpu := parseDockerfile(readFile(t, images[0].file)).stages[0]
	for _, img := range images[1:] {
		other := parseDockerfile(readFile(t, img.file)).stages[0]
		if !reflect.DeepEqual(stripLines(cpu), stripLines(other)) {
			t.Errorf("the builder stages of %s and %s differ", images[0].file, img.file)
		}
	}
}

// TestDockerfileStacksMatch: the two images install the workers' stack the
// same way, from the ENV that names the virtual environment to the RUN that
// fills it.
func TestDockerfileStacksMatch(t *testing.T) {
	want := stackPart(t, images[0].file)
	if len(want) < 4 {
		t.Fatalf("%s: the stack's instructions %v, want ENV, COPY, ARGs and RUN", images[0].file, want)
	}
	for _, img := range images[1:] {
		if got := stackPart(t, img.file); !reflect.DeepEqual(got, want) {
			t.Errorf("the stack of %s differs from %s's:\n%v\nwant\n%v", img.file, images[0].file, got, want)
		}
	}
}

// stackPart returns the runtime stage's instructions from ENV VIRTUAL_ENV
// through the RUN that makes the environment, without their lines.
func stackPart(t *testing.T, file string) []instruction {
	t.Helper()
	d := parseDockerfile(readFile(t, file))
	var out []instruction
	for _, in := range d.stages[len(d.stages)-1].body {
		if len(out) == 0 && (in.cmd != "ENV" || !strings.Contains(in.args, "VIRTUAL_ENV=")) {
			continue
		}
		in.line = 0
		out = append(out, in)
		if in.cmd == "RUN" && strings.Contains(in.args, "-m venv") {
			return out
		}
	}
	t.Fatalf("%s: no ENV VIRTUAL_ENV followed by the RUN that makes the environment", file)
	return nil
}

func stripLines(s stage) stage {
	s.body = slices.Clone(s.body)
	for i := range s.body {
		s.body[i].line = 0
	}
	return s
}

// TestDockerignore: each Dockerfile's ignore file keeps every file the
// server's build reads (its Go files and embedded files, asked of go list),
// the entrypoint and the requirement files of the workers' stack, and
// leaves out the repository's history and examples.
func TestDockerignore(t *testing.T) {
	needed := append(buildInputs(t), "docker/entrypoint.sh", "requirements/worker.txt", "requirements/constraints.txt")
	dropped := []string{".git/HEAD", "examples/README.md", "e2e/doc.go", "pyruntime/__pycache__/x.pyc", "deploy/test/go.mod"}
	var first []ignoreRule
	for i, img := range images {
		rules := parseIgnore(readFile(t, img.file+".dockerignore"))
		t.Run(img.file, func(t *testing.T) {
			for _, p := range needed {
				if ignored(rules, p) {
					t.Errorf("%s.dockerignore leaves out %s, which the build needs", img.file, p)
				}
			}
			for _, p := range dropped {
				if !ignored(rules, p) {
					t.Errorf("%s.dockerignore sends %s to the builder", img.file, p)
				}
			}
		})
		if i == 0 {
			first = rules
		} else if !reflect.DeepEqual(first, rules) {
			t.Errorf("%s.dockerignore and %s.dockerignore differ", images[0].file, img.file)
		}
	}
}

// buildInputs lists, relative to the repository root, go.mod, go.sum and
// the Go and embedded files of the module's packages that the server needs.
func buildInputs(t *testing.T) []string {
	t.Helper()
	const format = `{{if and .Module .Module.Main}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}
{{end}}{{range .CgoFiles}}{{$d}}/{{.}}
{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}
{{end}}{{end}}`
	cmd := exec.CommandContext(t.Context(), "go", "list", "-e", "-deps", "-f", format, "./cmd/switchyard")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files := []string{"go.mod", "go.sum"}
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSpace(line)
		if line == "" || strings.Contains(line, "__pycache__") {
			continue // Python's byte-code caches are left out on purpose
		}
		rel, err := filepath.Rel(root, line)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.ToSlash(rel))
	}
	if len(files) < 10 {
		t.Fatalf("go list found only %v", files)
	}
	return files
}
