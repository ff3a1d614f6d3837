// Package properties loads switchyard's two kinds of configuration into typed
// structs: a model folder's serving.properties (Model, LoadModel) and the
// server's config.properties (Server, LoadServer).
//
// Both files use the Java .properties format, read with
// github.com/magiconair/properties (UTF-8, no ${...} expansion). Loading
// applies defaults, then the file, then environment overrides, decodes the
// typed keys and validates the result. Keys the package does not know are
// kept, so they reach the worker unchanged.
//
// Every error about a setting is an *Error that names where the value was
// written (file and line, or environment variable) and the key, and wraps
// ErrSyntax or ErrInvalid.
//
// The package is a leaf: it imports nothing else of switchyard.
package properties
