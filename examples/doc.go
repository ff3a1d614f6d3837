// Package examples holds the example model folders of the default model
// store (models/). Its test runs each folder's own Python unit tests with
// Debian's interpreter, so that `go test ./...` covers them.
package examples
