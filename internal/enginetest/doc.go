// Package enginetest holds what the engines' tests share: point sets, the
// float64 oracle and the checks that compare an engine's answers with it.
//
// It is for tests only: internal/cpu's and internal/gpu's _test files
// import it so that the GPU is held to exactly the CPU's checks. Nothing
// outside a _test file should import it.
package enginetest
