// Package examples holds the example model folders of the default model
// store (models/) and model folders that are test fixtures, not models
// (fixtures/, kept out of the default store). Its test runs each folder's
// own Python unit tests with the project's interpreter (.venv), so that `go test ./...`
// covers them.
package examples
