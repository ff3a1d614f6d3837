package main

// clientCommands returns the subcommands that talk to a running server.
func clientCommands() map[string]command { return map[string]command{} }
