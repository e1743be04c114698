// Package readertest holds what the tests of the point readers share:
// the contract every reader keeps on any input, checked on fuzzed ones.
package readertest
