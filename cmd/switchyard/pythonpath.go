package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/switchyard/switchyard/pyruntime"
)

// printPythonPath is the pythonpath subcommand: it unpacks the worker
// runtime (as serve does) and prints the PYTHONPATH under which its
// djl_python imports, so that a handler author can run a model folder's
// handler without a server:
//
//	PYTHONPATH=$(switchyard pythonpath) python3 -m djl_python.test_model --model-dir DIR --input ...
func printPythonPath(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pythonpath", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: switchyard pythonpath\n\n"+
			"Prints the PYTHONPATH that makes switchyard's djl_python importable, e.g.\n"+
			"  PYTHONPATH=$(switchyard pythonpath) python3 -m djl_python.test_model --model-dir DIR --input '{\"inputs\": \"hi\"}'\n")
	}
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	rt, err := pyruntime.Unpack(pyruntime.DefaultCacheDir())
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(stdout, rt.Shim)
	return err
}
