//go:build unix

package process

import (
	"errors"
	"os"
	"syscall"
)

// signalGroup sends sig to the process group led by pid. A group that is
// gone reports os.ErrProcessDone, as os/exec's Cancel expects.
func signalGroup(pid int, sig syscall.Signal) error {
	err := syscall.Kill(-pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
