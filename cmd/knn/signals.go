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
