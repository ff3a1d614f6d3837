package docker

import (
	"debug/elf"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The agent image: switchyard agent serve for hosted agent runtimes, which
// take linux/arm64 images only.
const agentDockerfile = "Dockerfile.agent"

// agentGoBuild must all appear in the agent builder's go build: cgo with
// the cross compiler, arm64 whatever the target flag says, the version
// stamped.
var agentGoBuild = []string{"CGO_ENABLED=1", "GOOS=linux", "GOARCH=arm64", `CC="$(cat /tmp/target-cc)"`,
	"-X main.version=${VERSION}", "-X main.commit=${GIT_COMMIT}", "./cmd/switchyard", "-o /out/switchyard"}

func TestAgentDockerfile(t *testing.T) {
	d := parseDockerfile(readFile(t, agentDockerfile))
	if len(d.stages) != 2 {
		t.Fatalf("%d stages, want a builder and a runtime stage", len(d.stages))
	}
	build, run := d.stages[0], d.stages[1]
	checks := map[string]report{
		"builder":      checkBuilder(build),
		"go build":     checkAgentBuild(build),
		"runtime base": checkBase(run, "debian:bookworm-slim"),
		"arm64":        checkARM64(run),
		"files":        checkAgentFiles(run),
		"entrypoint":   checkAgentEntrypoint(run),
		"user":         checkUser(run),
		"port":         checkPort(run),
	}
	for name, problems := range checks {
		t.Run(name, func(t *testing.T) {
			for _, p := range problems {
				t.Error(p)
			}
		})
	}
	t.Run("labels", func(t *testing.T) {
		got := run.labels()
		if got["org.opencontainers.image.version"] != "${VERSION}" || got["org.opencontainers.image.revision"] != "${GIT_COMMIT}" {
			t.Errorf("labels %v", got)
		}
		if run.argLine("VERSION") == 0 || run.argLine("GIT_COMMIT") == 0 {
			t.Error("VERSION or GIT_COMMIT not declared in the runtime stage")
		}
	})
}

func checkAgentBuild(s stage) report {
	var r report
	var build string
	for _, in := range s.find("RUN") {
		if strings.Contains(in.args, "go build") {
			build = in.args
		}
	}
	for _, want := range agentGoBuild {
		if !strings.Contains(build, want) {
			r.addf("the builder's go build lacks %q", want)
		}
	}
	setup := s.find("RUN")
	if len(setup) == 0 || !strings.Contains(setup[0].args, "gcc-aarch64-linux-gnu") || !strings.Contains(setup[0].args, "aarch64-linux-gnu-gcc") {
		r.addf("the builder does not install and pick Debian's aarch64 cross compiler")
	}
	return r
}

// checkARM64: the runtime stage is arm64 whatever the build's --platform,
// and runs nothing, so that no emulation is needed to build it.
func checkARM64(s stage) report {
	var r report
	if !slices.Equal(s.flags, []string{"--platform=linux/arm64"}) {
		r.addf("runtime stage flags %q, want --platform=linux/arm64", s.flags)
	}
	if runs := s.find("RUN"); len(runs) > 0 {
		r.addf("the runtime stage has RUN at line %d: an arm64 stage would need emulation", runs[0].line)
	}
	return r
}

func checkAgentFiles(s stage) report {
	return checkCopies(s, "--from=builder /out/switchyard "+serverPath,
		"--from=builder /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt")
}

// checkAgentEntrypoint: the binary runs agent serve on 0.0.0.0:8080, the
// hosted runtime's port, in the exec form (so it is PID 1 and gets SIGTERM).
func checkAgentEntrypoint(s stage) report {
	var r report
	want := map[string][]string{
		"ENTRYPOINT": {serverPath, "agent", "serve"},
		"CMD":        {"--address", "0.0.0.0:8080"},
	}
	for cmd, w := range want {
		ins := s.find(cmd)
		var got []string
		if len(ins) != 1 || json.Unmarshal([]byte(ins[0].args), &got) != nil || !slices.Equal(got, w) {
			r.addf("%s %v, want exactly one, %q in the exec form", cmd, ins, w)
		}
	}
	return r
}

// TestAgentDockerignore: the agent image's ignore file is the CPU image's.
func TestAgentDockerignore(t *testing.T) {
	agent := parseIgnore(readFile(t, agentDockerfile+".dockerignore"))
	cpu := parseIgnore(readFile(t, images[0].file+".dockerignore"))
	if !reflect.DeepEqual(agent, cpu) {
		t.Errorf("%s.dockerignore and %s.dockerignore differ", agentDockerfile, images[0].file)
	}
}

// checkAgentInBinary: the cross-built binary holds the agent runtime, which
// the agent image runs.
func checkAgentInBinary(t *testing.T, f *elf.File) {
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	want := "github.com/switchyard/switchyard/agent.(*Server).ServeHTTP"
	if !slices.ContainsFunc(syms, func(s elf.Symbol) bool { return s.Name == want }) {
		t.Errorf("no %s in the arm64 binary", want)
	}
}
