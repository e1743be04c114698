package main

import (
	"os"
	"syscall"
)

// stopSignals stop a run as SIGTERM does, its temporaries and spools
// removed: SIGHUP (a closed terminal or ssh session) ended the process at
// once and left them behind, and SIGQUIT, whose default in Go is a
// goroutine dump and exit 2, would leave them too.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return "SIGINT"
}

// stopSignalsFor is stopSignals for the command args runs. The Python
// package's worker (`knn worker`) keeps Go's own SIGHUP and SIGQUIT: it
// holds no files of the user's, and its parent tells a crash by how it
// ended (SIGQUIT's goroutine dump is the worker's last words).
func stopSignalsFor(args []string) []os.Signal {
	if len(args) > 0 && args[0] == "worker" {
		return []os.Signal{os.Interrupt, syscall.SIGTERM}
	}
	return stopSignals
}
