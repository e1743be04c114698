//go:build !amd64 || purego

package index

// HaveAVX2FMA is false where the assembly is not built.
const HaveAVX2FMA = false
