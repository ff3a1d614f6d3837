package docker

import (
	"slices"
	"strings"
	"testing"
)

func TestParseInstructions(t *testing.T) {
	cases := []struct {
		name, src string
		want      []instruction
	}{
		{"plain", "FROM a\nRUN b\n", []instruction{{1, "FROM", "a"}, {2, "RUN", "b"}}},
		{"comments and blank lines", "# syntax=docker/dockerfile:1\n\n  # x\nfrom a AS b\n",
			[]instruction{{4, "FROM", "a AS b"}}},
		{"continuation", "RUN a \\\n    b \\\n    c\nUSER 1\n",
			[]instruction{{1, "RUN", "a      b      c"}, {4, "USER", "1"}}},
		{"comment and blank line inside a continuation", "RUN a \\\n# note\n\n  b\n",
			[]instruction{{1, "RUN", "a    b"}}},
		{"continuation at the end of the file", "RUN a \\", []instruction{{1, "RUN", "a"}}},
		{"CRLF line ends", "FROM a\r\nEXPOSE 8080\r\n", []instruction{{1, "FROM", "a"}, {2, "EXPOSE", "8080"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := parseInstructions(tc.src); !slices.Equal(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseDockerfileStages(t *testing.T) {
	src := "ARG BASE=\"debian:12\"\nARG TAG\nFROM --platform=$BUILDPLATFORM golang:1 AS b\nRUN x\n" +
		"FROM ${BASE}\nLABEL a=1 \"b c\"=\"d e\" f='g'\nARG V=1\n"
	d := parseDockerfile(src)
	if len(d.stages) != 2 {
		t.Fatalf("%d stages, want 2", len(d.stages))
	}
	cases := []struct {
		name      string
		got, want any
	}{
		{"builder base", d.stages[0].base, "golang:1"},
		{"builder name", d.stages[0].name, "b"},
		{"builder flags", strings.Join(d.stages[0].flags, " "), "--platform=$BUILDPLATFORM"},
		{"runtime base from a global ARG", d.stages[1].base, "debian:12"},
		{"runtime labels", d.stages[1].labels()["b c"] + d.stages[1].labels()["f"], "d eg"},
		{"ARG line", d.stages[1].argLine("V"), 7},
		{"absent ARG", d.stages[1].argLine("W"), 0},
		{"global ARG without default", d.globalArgs["TAG"], ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %v, want %v", tc.got, tc.want)
			}
		})
	}
}

func TestSplitWords(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"  a  b\tc ", []string{"a", "b", "c"}},
		{`k="v w" x='y z'`, []string{"k=v w", "x=y z"}},
		{`"it's"`, []string{"it's"}},
		{`""`, []string{""}},
		{`a"b`, []string{"ab"}},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			if got := splitWords(tc.in); !slices.Equal(got, tc.want) {
				t.Errorf("splitWords(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestIgnored(t *testing.T) {
	rules := parseIgnore("# c\n.git\n/examples/\n**/__pycache__\n*.md\n!README.md\nbin\nw?rker/x*\n")
	cases := []struct {
		path string
		want bool
	}{
		{".git/HEAD", true},
		{"examples/models/a/model.py", true},
		{"pyruntime/__pycache__/a.pyc", true},
		{"__pycache__/a.pyc", true},
		{"CHANGES.md", true},
		{"README.md", false},
		{"docs/api.md", false}, // * stays inside one path element
		{"bin/switchyard", true},
		{"cmd/bin/x", false}, // patterns are anchored at the context root
		{"worker/xyz.go", true},
		{"pyruntime/x.go", false},
		{"go.mod", false},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			if got := ignored(rules, tc.path); got != tc.want {
				t.Errorf("ignored(%q) = %v, want %v", tc.path, got, tc.want)
			}
		})
	}
}

// brokenDockerfile breaks each part of the contract once.
const brokenDockerfile = `FROM golang:1.25 AS build
ARG VERSION
RUN CGO_ENABLED=0 go build -o /out/switchyard ./cmd/switchyard
FROM alpine
RUN apk add python3
COPY --from=build /out/switchyard /usr/bin/switchyard
LABEL com.amazonaws.sagemaker.capabilities.multi-models=false
ARG VERSION
USER 0:0
EXPOSE 8080 8081
ENTRYPOINT /usr/local/bin/switchyard-entrypoint
`

// TestChecksCatchABrokenDockerfile: every check finds its problem.
func TestChecksCatchABrokenDockerfile(t *testing.T) {
	img := image{file: "broken", base: "debian:bookworm-slim", packages: []string{"python3", "python3-venv"}}
	want := map[string][]string{
		"builder":      {"want golang:1.26-bookworm AS builder", "lack --platform=$BUILDPLATFORM"},
		"go build":     {`lacks "CGO_ENABLED=1"`, `lacks "GOARCH=$TARGETARCH"`, "ARG TARGETARCH not declared"},
		"runtime base": {`FROM "alpine"`},
		"labels":       {"multi-models=\"false\"", "accept-bind-to-port=\"\"", "ARG GIT_COMMIT not declared", "ARG VERSION not declared"},
		"packages":     {"installs no python3-venv"},
		"stack":        {`ENV VIRTUAL_ENV=""`, "ENV PATH=", "no COPY requirements/worker.txt", "no RUN that makes the virtual environment"},
		"files":        {"no COPY --from=builder", "no COPY --chmod=0755 docker/entrypoint.sh"},
		"entrypoint":   {"is not the exec (JSON) form", "0 CMD instructions"},
		"user":         {`USER "0:0"`},
		"port":         {"want exactly 8080"},
	}
	got := contractChecks(img, parseDockerfile(brokenDockerfile))
	for name, wants := range want {
		t.Run(name, func(t *testing.T) {
			all := strings.Join(got[name], "\n")
			for _, w := range wants {
				if !strings.Contains(all, w) {
					t.Errorf("no problem mentioning %q; got:\n%s", w, all)
				}
			}
		})
	}
	if r := contractChecks(img, parseDockerfile("FROM a\n"))["stages"]; len(r) != 1 {
		t.Errorf("a one-stage Dockerfile: %q, want one problem about the stages", r)
	}
}

// TestStackCheckCatchesAWrongInstall: the stack check reads the RUN that
// makes the virtual environment and the build arguments before it.
func TestStackCheckCatchesAWrongInstall(t *testing.T) {
	src := `FROM debian:bookworm-slim
ENV VIRTUAL_ENV=/opt/switchyard/venv PATH=/usr/bin:/opt/switchyard/venv/bin
COPY requirements/worker.txt requirements/constraints.txt /opt/switchyard/requirements/
ARG WITH_TRANSFORMERS=false
RUN python3 -m venv /opt/switchyard/venv && /opt/switchyard/venv/bin/pip install -r requirements/worker.txt
ARG TORCH_INDEX_URL=""
`
	all := strings.Join(checkStack(parseDockerfile(src).stages[0]), "\n")
	for _, w := range []string{
		"want /opt/switchyard/venv/bin first",
		`lacks "/usr/bin/python3 -m venv \"$VIRTUAL_ENV\""`,
		`lacks "install -r \"$req/worker.txt\" -c \"$req/constraints.txt\""`,
		`ARG WITH_TRANSFORMERS defaults to "false", want "true"`,
		"ARG TORCH_INDEX_URL not declared before line 5",
	} {
		if !strings.Contains(all, w) {
			t.Errorf("no problem mentioning %q; got:\n%s", w, all)
		}
	}
	if strings.Contains(all, "VIRTUAL_ENV=") || strings.Contains(all, "no COPY") {
		t.Errorf("problems with what is right:\n%s", all)
	}
}

func FuzzParseDockerfile(f *testing.F) {
	f.Add(brokenDockerfile)
	f.Add("ARG A=b\nFROM ${A} AS x\nRUN a \\\n# c\n b\nLABEL k=\"v\"\n")
	f.Add("FROM\nAS\n\\")
	f.Fuzz(func(t *testing.T, src string) {
		ins := parseInstructions(src)
		lines := strings.Count(src, "\n") + 1
		for i, in := range ins {
			if in.cmd == "" || in.cmd != strings.ToUpper(in.cmd) || strings.HasPrefix(in.cmd, "#") {
				t.Errorf("instruction %d has keyword %q", i, in.cmd)
			}
			if in.line < 1 || in.line > lines || (i > 0 && in.line <= ins[i-1].line) {
				t.Errorf("instruction %d at line %d (of %d, previous %+v)", i, in.line, lines, ins[max(i-1, 0)])
			}
		}
		d := parseDockerfile(src)
		for _, s := range d.stages {
			_ = s.labels()
		}
	})
}

func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{"a b", `k="v w"`, `'`, "\t\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := splitWords(s)
		if !strings.ContainsAny(s, `"'`) && !slices.Equal(got, strings.Fields(s)) {
			t.Errorf("splitWords(%q) = %q, want strings.Fields = %q", s, got, strings.Fields(s))
		}
	})
}

func FuzzIgnore(f *testing.F) {
	f.Add(".git\n**/__pycache__\n!keep\n", "a/__pycache__/b")
	f.Add("w?rk*/[x]\n", "work/[x]")
	f.Fuzz(func(t *testing.T, patterns, path string) {
		rules := parseIgnore(patterns)
		_ = ignored(rules, path)
		plain := strings.Trim(strings.TrimSpace(path), "/")
		if plain == "" || plain == "." || strings.ContainsAny(plain, "*?!#\n\r") || strings.TrimSpace(plain) != plain {
			return
		}
		if !ignored(parseIgnore(plain), plain) {
			t.Errorf("pattern %q does not ignore itself", plain)
		}
	})
}
