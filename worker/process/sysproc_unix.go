//go:build unix && !linux

package process

import "syscall"

// sysProcAttr puts the worker in a process group of its own, so that signals
// reach everything it started. Only Linux can also tie its life to the
// front-end's.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
