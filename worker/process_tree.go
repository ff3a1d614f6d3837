package worker

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxTreeSize bounds the walk of a worker's process tree.
const maxTreeSize = 1024

// procTree finds the descendants of processes, as /proc shows them: a
// handler may start processes of its own (tensor-parallel ranks, data
// loaders) that hold GPU memory too.
type procTree struct{ kids func(int) []int }

// readProcTree returns a lookup of the children of a PID: it reads
// /proc/<pid>/task/<tid>/children where the kernel has it, else the parent
// PID of every process from /proc/<pid>/stat, once.
func readProcTree(procRoot string) func(int) []int {
	self := strconv.Itoa(os.Getpid())
	if _, err := os.Stat(filepath.Join(procRoot, self, "task", self, "children")); err == nil {
		return childrenFiles(procRoot)
	}
	return childrenByParent(procRoot)
}

// of returns pid and the PIDs of all its descendants.
func (t procTree) of(pid int) []int {
	out := []int{pid}
	for i := 0; i < len(out) && len(out) < maxTreeSize; i++ {
		out = append(out, t.kids(out[i])...)
	}
	return out
}

// childrenFiles returns a lookup of the children files of every thread.
func childrenFiles(procRoot string) func(int) []int {
	return func(pid int) []int {
		files, _ := filepath.Glob(filepath.Join(procRoot, strconv.Itoa(pid), "task", "*", "children"))
		var out []int
		for _, f := range files {
			b, _ := os.ReadFile(f)
			out = append(out, atois(strings.Fields(string(b)))...)
		}
		return out
	}
}

// childrenByParent reads the parent PID of every process once and returns
// a lookup of the children of a PID.
func childrenByParent(procRoot string) func(int) []int {
	byParent := map[int][]int{}
	stats, _ := filepath.Glob(filepath.Join(procRoot, "[0-9]*", "stat"))
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if pid, ppid, ok := parseStat(string(b)); ok {
			byParent[ppid] = append(byParent[ppid], pid)
		}
	}
	return func(pid int) []int { return byParent[pid] }
}

// parseStat returns the PID and parent PID of a /proc/<pid>/stat line,
// "pid (comm) state ppid ...", where comm may hold spaces and parentheses.
func parseStat(line string) (pid, ppid int, ok bool) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return 0, 0, false
	}
	fields := strings.Fields(line[end+1:])
	if len(fields) < 2 {
		return 0, 0, false
	}
	pid, err1 := strconv.Atoi(strings.TrimSpace(line[:open]))
	ppid, err2 := strconv.Atoi(fields[1])
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return pid, ppid, true
}

func atois(fields []string) []int {
	out := make([]int, 0, len(fields))
	for _, f := range fields {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}
