package docker

import (
	"context"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The values the cross-build stamps with -X, as the Dockerfiles do.
const (
	stampVersion = "v0.0.0-docker-test"
	stampCommit  = "0123456789abcdef"
)

// maxGlibc is the newest glibc symbol version the server may need: 2.35 is
// Ubuntu 22.04's, the oldest CUDA runtime base docker/Dockerfile.gpu takes.
var maxGlibc = [2]int{2, 35}

// TestServerCrossCompilesForARM64 builds the server as the Dockerfiles'
// builder does for linux/arm64 (CGO_ENABLED=1 with Debian's cross gcc, no
// NVIDIA driver) and reads the result's ELF header. Dockerfile.agent builds
// the same binary for the same platform, to run its agent subcommand.
func TestServerCrossCompilesForARM64(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the linux/arm64 cgo build of the server")
	}
	cc, err := exec.LookPath("aarch64-linux-gnu-gcc")
	if err != nil {
		t.Skip("skipping the linux/arm64 cgo build: aarch64-linux-gnu-gcc is not installed " +
			"(Debian: apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross)")
	}
	f := crossBuild(t, "arm64", cc)
	t.Run("machine", func(t *testing.T) {
		if f.Machine != elf.EM_AARCH64 || f.Class != elf.ELFCLASS64 || f.Data != elf.ELFDATA2LSB {
			t.Errorf("ELF %v %v %v, want EM_AARCH64 ELFCLASS64 ELFDATA2LSB", f.Machine, f.Class, f.Data)
		}
	})
	t.Run("cgo", func(t *testing.T) { checkDynamic(t, f, "/lib/ld-linux-aarch64.so.1") })
	t.Run("glibc", func(t *testing.T) { checkGlibc(t, f) })
	t.Run("version", func(t *testing.T) { checkStamp(t, f) })
	t.Run("agent", func(t *testing.T) { checkAgentInBinary(t, f) })
}

// crossBuild builds ./cmd/switchyard for linux/goarch with cc and opens it.
func crossBuild(t *testing.T, goarch, cc string) *elf.File {
	t.Helper()
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-10*time.Second))
		defer cancel()
	}
	out := filepath.Join(t.TempDir(), "switchyard")
	ldflags := "-X main.version=" + stampVersion + " -X main.commit=" + stampCommit
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags", ldflags, "-o", out, "./cmd/switchyard")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "GOOS=linux", "GOARCH="+goarch, "CC="+cc)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build for linux/%s: %v\n%s", goarch, err, msg)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// checkDynamic: a cgo build is linked against the C library, through the
// target's dynamic loader; a CGO_ENABLED=0 build would be static.
func checkDynamic(t *testing.T, f *elf.File, loader string) {
	interp, err := interpreter(f)
	if err != nil {
		t.Fatal(err)
	}
	if interp != loader {
		t.Errorf("dynamic loader %q, want %q (was cgo on?)", interp, loader)
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(libs, "libc.so.6") {
		t.Errorf("imported libraries %q lack libc.so.6", libs)
	}
	if slices.ContainsFunc(libs, func(l string) bool { return strings.Contains(l, "nvidia") }) {
		t.Errorf("imported libraries %q name an NVIDIA library: the driver must be optional", libs)
	}
}

func interpreter(f *elf.File) (string, error) {
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(p.Open())
			return strings.TrimRight(string(b), "\x00"), err
		}
	}
	return "", errors.New("no PT_INTERP program header")
}

// checkGlibc: the newest glibc symbol version the binary asks for is old
// enough for every base image the Dockerfiles name.
func checkGlibc(t *testing.T, f *elf.File) {
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	newest, name := [2]int{}, ""
	for _, s := range syms {
		v, ok := glibcVersion(s.Version)
		if ok && (v[0] > newest[0] || v[0] == newest[0] && v[1] > newest[1]) {
			newest, name = v, s.Name+"@"+s.Version
		}
	}
	if newest == ([2]int{}) {
		t.Fatal("no GLIBC_ symbol versions: not linked against glibc")
	}
	if newest[0] > maxGlibc[0] || newest[0] == maxGlibc[0] && newest[1] > maxGlibc[1] {
		t.Errorf("%s needs glibc %d.%d, newer than %d.%d", name, newest[0], newest[1], maxGlibc[0], maxGlibc[1])
	}
}

// glibcVersion reads "GLIBC_2.34" (or "GLIBC_2.3.4") as {2, 34} ({2, 3}).
func glibcVersion(v string) ([2]int, bool) {
	rest, ok := strings.CutPrefix(v, "GLIBC_")
	if !ok {
		return [2]int{}, false
	}
	parts := strings.Split(rest, ".")
	if len(parts) < 2 {
		return [2]int{}, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	return [2]int{major, minor}, err1 == nil && err2 == nil
}

// checkStamp: -X set main.version and main.commit. Skipped while
// cmd/switchyard declares no such variables (the linker then ignores -X).
func checkStamp(t *testing.T, f *elf.File) {
	want := map[string]string{"main.version": stampVersion, "main.commit": stampCommit}
	for sym, v := range want {
		got, err := goString(f, sym)
		if err != nil {
			t.Fatal(err)
		}
		if got != v {
			t.Errorf("%s = %q, want %q", sym, got, v)
		}
	}
}

var errNoSymbol = errors.New("no such symbol")

// goString reads the Go string variable name from a little-endian 64-bit
// binary: its two-word header, then the bytes it points at.
func goString(f *elf.File, name string) (string, error) {
	syms, err := f.Symbols()
	if err != nil {
		return "", err
	}
	i := slices.IndexFunc(syms, func(s elf.Symbol) bool { return s.Name == name })
	if i < 0 {
		return "", fmt.Errorf("%s: %w", name, errNoSymbol)
	}
	header, err := readAddr(f, syms[i].Value, 16)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	ptr, n := binary.LittleEndian.Uint64(header), binary.LittleEndian.Uint64(header[8:])
	if n == 0 {
		return "", nil
	}
	b, err := readAddr(f, ptr, n)
	return string(b), err
}

// readAddr reads n bytes at virtual address addr from the section holding them.
func readAddr(f *elf.File, addr, n uint64) ([]byte, error) {
	for _, s := range f.Sections {
		if s.Type == elf.SHT_NOBITS || addr < s.Addr || addr+n > s.Addr+s.Size {
			continue
		}
		b := make([]byte, n)
		_, err := s.ReadAt(b, int64(addr-s.Addr))
		return b, err
	}
	return nil, fmt.Errorf("address %#x (+%d) is in no section with data", addr, n)
}

// TestGoStringReadsStampedVariable checks the reader checkStamp relies on
// against a small program stamped the same way.
func TestGoStringReadsStampedVariable(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping a go build")
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":  "module stamp\n\ngo 1.26\n",
		"main.go": "package main\n\nvar version = \"dev\"\n\nfunc main() { println(version) }\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "stamp")
	cmd := exec.CommandContext(t.Context(), "go", "build", "-ldflags", "-X main.version="+stampVersion, "-o", out, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOWORK=off", "GOFLAGS=")
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, msg)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases := []struct {
		sym, want string
		err       error
	}{
		{"main.version", stampVersion, nil},
		{"main.commit", "", errNoSymbol},
	}
	for _, tc := range cases {
		t.Run(tc.sym, func(t *testing.T) {
			got, err := goString(f, tc.sym)
			if got != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("goString(%s) = %q, %v; want %q, %v", tc.sym, got, err, tc.want, tc.err)
			}
		})
	}
}
