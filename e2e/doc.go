// Package e2e holds switchyard's end-to-end tests: they build the real
// binary, start it on model folders with real Python workers
// (the project's .venv/bin/python and the built-in runtime), and talk to it over HTTP.
// They are skipped with -short.
package e2e
