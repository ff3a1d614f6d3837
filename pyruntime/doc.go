// Package pyruntime ships switchyard's Python worker runtime inside the Go
// binary and unpacks it to a cache folder, where the front-end starts it as
// the engine of each model worker.
//
// The runtime (the python folder next to this file) is embedded in the
// binary. Unpack writes it once per content hash into
// <cache>/switchyard-runtime-<hash[:16]>: a folder that already holds every
// file with the right bytes is reused, a damaged or partial one is replaced,
// and a new tree is written into a temporary sibling and renamed into place,
// so two servers sharing a cache never see half a tree. Workers are then
// started as
//
//	<python> <Runtime.Engine> --sock-type unix --sock-name <sock> --model-dir <dir> \
//	    --entry-point <ep> --device-id <n> --cluster-size 1 \
//	    --recommended-entry-point <rep> --log-level <level> --no-async-mode
//
// (DJL Serving 0.36's argument list) with Runtime.PythonPath first on
// PYTHONPATH. The wire protocol the engine
// speaks is described in docs/protocol.md.
//
// The runtime's package, switchyard_runtime, has three parts whose imports
// point one way: generative (request schemas, answers, the built-in handler
// and its backends) imports djl (Input, Output, PairList, NDList: the API
// handlers use, which the djl_python shim re-exports), which may import wire
// (frame codec, frame reader, writer). The modules around them (cli, server,
// tracked, results, frames, loader) put the parts together, and only the
// loader imports generative. The runtime's tests/test_layers.py checks these
// directions; TestPythonUnitTests runs it with the rest of the runtime's tests.
package pyruntime
