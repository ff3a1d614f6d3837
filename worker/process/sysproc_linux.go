//go:build linux

package process

import "syscall"

// sysProcAttr puts the worker in a process group of its own, so that signals
// reach everything it started, and has the kernel kill it when the front-end
// dies. (Pdeathsig follows the thread that started the worker; Go does not
// end its threads unless a goroutine exits while locked to one, which
// switchyard never does.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
