// Package archtest checks the direction of imports between switchyard's
// packages (README.md, Architecture): the leaves import nothing of ours, and the
// front-end never imports the worker package.
package archtest
