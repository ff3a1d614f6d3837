// Package archtest checks the direction of imports between switchyard's
// packages (DESIGN.md §2): the leaves import nothing of ours, and the
// front-end never imports the worker package.
package archtest
