//go:build race

package pointio

const raceEnabled = true
