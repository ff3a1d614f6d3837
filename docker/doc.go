// Package docker holds switchyard's container images and their entrypoint,
// and the tests that keep them to the hosting contract on a machine without
// a Docker engine.
//
// The folder's real content is not Go:
//
//   - Dockerfile builds the CPU image (Debian bookworm) and Dockerfile.gpu
//     the GPU image (an NVIDIA CUDA base). Both are multi-stage: a
//     golang:1.26-bookworm builder cross-compiles the server with
//     CGO_ENABLED=1 for each target platform (linux/amd64 and linux/arm64),
//     stamping the version and commit into the binary and the image labels.
//     Their workers run a virtual environment, /opt/switchyard/venv, holding
//     requirements/worker.txt at the versions of requirements/constraints.txt
//     (torch, transformers, ...; numpy alone with WITH_TRANSFORMERS=false).
//     Dockerfile.examples adds to the CPU image the model folders of
//     examples/models and the weights minilm names.
//   - entrypoint.sh maps SageMaker's "docker run IMAGE serve" onto
//     "switchyard serve": one listener for both APIs on port 8080 (or
//     SAGEMAKER_BIND_TO_PORT), the model layout found under /opt/ml, and the
//     interpreter (the virtual environment's) and socket folder of the
//     image, each only where the user has not set it. Every other command is
//     passed through.
//   - README.md says how to build, run and deploy the images.
//
// The tests run the entrypoint with a stub server for every layout and
// override, run it with the real server against an example model as a
// single-model and as a multi-model endpoint, cross-compile the server for
// linux/arm64 and read the ELF header, check that the Dockerfiles keep
// the labels, the stages, the cgo settings and the workers' stack, and that
// the images install every package the example models import and the
// weights they name. The package exports nothing.
package docker
