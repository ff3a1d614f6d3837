// Package docker holds switchyard's container images and their entrypoint,
// and the tests that keep them to the hosting contract on a machine without
// a Docker engine.
//
// The folder's real content is not Go:
//
//   - Dockerfile builds the CPU image (Debian bookworm, Debian's Python) and
//     Dockerfile.gpu the GPU image (an NVIDIA CUDA runtime base). Both are
//     multi-stage: a golang:1.26-bookworm builder cross-compiles the server
//     with CGO_ENABLED=1 for each target platform (linux/amd64 and
//     linux/arm64), stamping the version and commit into the binary and the
//     image labels. Dockerfile.examples adds to the CPU image the Debian
//     packages and the model folders of examples/models.
//   - entrypoint.sh maps SageMaker's "docker run IMAGE serve" onto
//     "switchyard serve": one listener for both APIs on port 8080 (or
//     SAGEMAKER_BIND_TO_PORT), the model layout found under /opt/ml, and the
//     interpreter and socket folder of the image, each only where the user
//     has not set it. Every other command is passed through.
//   - README.md says how to build, run and deploy the images.
//
// The tests run the entrypoint with a stub server for every layout and
// override, run it with the real server against an example model as a
// single-model and as a multi-model endpoint, cross-compile the server for
// linux/arm64 and read the ELF header, check that the Dockerfiles keep
// the labels, the stages and the cgo settings, and that the examples image
// installs every package the example models import. The package exports
// nothing.
package docker
