// Package api holds the types and sentinel errors that the front-end and the
// model registry exchange: model and worker records with DJL Serving's JSON
// field names, register and scale parameters, and the errors that the
// front-end maps to HTTP status codes. It has no logic and imports nothing of
// switchyard's, so that frontend and worker can share it without importing
// each other.
package api
