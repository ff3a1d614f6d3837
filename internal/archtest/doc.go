// Package archtest checks the direction of imports between switchyard's
// packages (docs/architecture.md, Packages). It denies by default: every
// package of the module is listed with the packages of ours it may import,
// and a new package fails the test until it is placed. The leaves import
// nothing of ours, and the front-end never imports the worker side.
package archtest
