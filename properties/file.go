package properties

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// MaxFileSize is the largest properties file the loaders read: 1 MiB, far
// more than any real serving.properties or config.properties holds.
const MaxFileSize = 1 << 20

// ReadRegularFile returns the content of the file at path, following
// symbolic links, when it is a regular file of at most limit bytes. It
// never reads a device or blocks on a named pipe: the file's kind and size
// are checked before it is opened, the open does not wait for a pipe's
// writer, and the kind is checked again on the open file, in case the
// path changed in between. Other errors wrap ErrFile, or fs.ErrNotExist
// when nothing is at path.
func ReadRegularFile(path string, limit int64) ([]byte, error) {
	if err := CheckRegularFile(path, limit); err != nil {
		return nil, err
	}
	f, err := openRegular(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fileError(path, err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(path, limit)
	}
	return data, nil
}

// CheckRegularFile returns the error ReadRegularFile would return for the
// kind or size of the file at path, without opening it.
func CheckRegularFile(path string, limit int64) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fileError(path, err)
	}
	return checkRegular(path, fi, limit)
}

// openRegular opens path without waiting for a named pipe's writer and
// checks that what it opened is a regular file of at most limit bytes.
func openRegular(path string, limit int64) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fileError(path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		err = fileError(path, err)
	} else {
		err = checkRegular(path, fi, limit)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// checkRegular refuses what is not a regular file, or is larger than limit.
func checkRegular(path string, fi fs.FileInfo, limit int64) error {
	if !fi.Mode().IsRegular() {
		return &Error{File: path, Msg: "is " + fileKind(fi.Mode()) + ", not a regular file", Err: ErrFile}
	}
	if fi.Size() > limit {
		return tooLarge(path, limit)
	}
	return nil
}

func tooLarge(path string, limit int64) error {
	return &Error{File: path, Msg: "is larger than " + strconv.FormatInt(limit, 10) + " bytes", Err: ErrFile}
}

// fileError wraps an error of the file system; a missing file keeps
// fs.ErrNotExist so callers can tell it apart.
func fileError(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("properties: %s: %w", path, fs.ErrNotExist)
	}
	return &Error{File: path, Msg: strings.TrimPrefix(err.Error(), "open "+path+": "), Err: ErrFile}
}

// fileKind names the kind of a file that is not regular.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}
