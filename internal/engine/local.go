package engine

import "github.com/geoknn/geoknn/internal/index"

// LocalIndex is a reference set prepared once for many small queries,
// answered on the calling goroutine with no engine (no fan-out to
// workers, no plan): the root package's Index answers queries of a few
// hundred points through it, and hands larger ones to its engine with the
// same preparation (Prepared). It is read-only: safe for concurrent
// queries.
type LocalIndex interface {
	// Prepared is the references as the engines take them
	// (Request.Prepared).
	Prepared() *Prepared
	// Nearest answers obs into out.
	Nearest(obs index.Points, out Result) error
	// KNearest answers the out.K nearest within maxRad radians.
	KNearest(obs index.Points, maxRad float64, out KResult) error
	// Within answers the references within rad radians, counted or, with
	// list, listed.
	Within(obs index.Points, rad float64, list bool) (WithinResult, error)
}
