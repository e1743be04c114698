package geoknn

import (
	"context"

	"github.com/geoknn/geoknn/stream"
)

// Query is the question asked of every observation: the nearest reference
// (the zero value), the K nearest (within MaxMetres when it is above 0),
// or the references within RadiusMetres (their count, or with List which
// they are, nearest first; Within asks so for a RadiusMetres of 0). Every path that answers (a call, a stream, an
// MPI rank, the command's flags, the Python worker) builds one and
// switches on its Kind where answering differs, so that a new kind is a
// new case in those switches rather than another test of the fields at
// every site.
type Query struct {
	K            int
	MaxMetres    float64
	RadiusMetres float64
	// Within asks for the references within RadiusMetres even when it is
	// 0: those at the observation's very spot. A RadiusMetres above 0
	// asks so without it.
	Within bool
	List   bool
	// ExcludeSelf says the observations are the references: observation
	// i leaves out reference i (a k-nearest query asks the engine for K+1
	// and drops it; K 0 means 1).
	ExcludeSelf bool
}

// Kind is the answers' kind, as the answer writers take it, and K their
// references a row (KindKNearest; 0 for the other kinds).
func (q Query) Kind() (kind stream.AnswerKind, k int) {
	switch {
	case q.within() && q.List:
		return stream.KindWithinLists, 0
	case q.within():
		return stream.KindWithinCounts, 0
	case q.K > 0 || q.ExcludeSelf || q.MaxMetres > 0:
		return stream.KindKNearest, max(q.K, 1)
	}
	return stream.KindNearest, 0
}

// Asked is how many references a row the engine finds for a k-nearest
// query: one more than Kind's with ExcludeSelf, as each row then drops
// the observation's own.
func (q Query) Asked() int {
	_, k := q.Kind()
	return k + boolInt(q.ExcludeSelf)
}

// Check refuses, against nref references, a query that every observation
// would refuse: a radius or distance limit that is no distance, a K
// outside 1 to the references (less the observation's own with
// ExcludeSelf). It lets a caller refuse before reading any observation.
func (q Query) Check(nref int) error {
	if q.RadiusMetres != 0 || q.Within {
		_, err := radiusRad(q.RadiusMetres)
		return err
	}
	if kind, _ := q.Kind(); kind == stream.KindKNearest {
		_, err := checkKNearest(&KResult{K: q.Asked()}, nref, q.MaxMetres)
		return err
	}
	return nil
}

// within reports whether q asks for the references within a radius.
func (q Query) within() bool { return q.Within || q.RadiusMetres > 0 }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Answer is a Query's answers: the result of its kind, the others nil.
type Answer struct {
	Kind    stream.AnswerKind
	Nearest *Result       // KindNearest
	K       *KResult      // KindKNearest
	Within  *WithinResult // KindWithinCounts, KindWithinLists
}

// Answers is a's answers as the answer writers take them.
func (a *Answer) Answers() stream.Answers {
	switch a.Kind {
	case stream.KindNearest:
		return a.Nearest.Answers()
	case stream.KindKNearest:
		return a.K.Answers()
	}
	return a.Within.Answers()
}

// Stats says how a's query ran.
func (a *Answer) Stats() Stats {
	switch a.Kind {
	case stream.KindNearest:
		return a.Nearest.Stats
	case stream.KindKNearest:
		return a.K.Stats
	}
	return a.Within.Stats
}

// asker answers each kind against fixed references: an Index, or a
// Searcher and its references (againstRef).
type asker interface {
	NearestInto(ctx context.Context, obs Points, res *Result) error
	KNearestInto(ctx context.Context, obs Points, maxMetres float64, res *KResult) error
	within(ctx context.Context, obs Points, metres float64, list bool) (*WithinResult, error)
}

// againstRef is a Searcher's calls against ref, as an Index's take no
// references.
type againstRef struct {
	s   *Searcher
	ref Points
}

func (a againstRef) NearestInto(ctx context.Context, obs Points, res *Result) error {
	return a.s.NearestInto(ctx, obs, a.ref, res)
}

func (a againstRef) KNearestInto(ctx context.Context, obs Points, maxMetres float64, res *KResult) error {
	return a.s.KNearestInto(ctx, obs, a.ref, maxMetres, res)
}

func (a againstRef) within(ctx context.Context, obs Points, metres float64, list bool) (*WithinResult, error) {
	return a.s.within(ctx, obs, a.ref, metres, list)
}

// Answer answers q for every observation against ref: the call of q's
// kind (Nearest, KNearest, WithinCount or WithinList), with ExcludeSelf
// each observation's own reference (its index) left out.
func (s *Searcher) Answer(ctx context.Context, obs, ref Points, q Query) (*Answer, error) {
	return answer(ctx, againstRef{s, ref}, obs, q)
}

// Answer answers q for every observation, as Searcher.Answer does.
func (x *Index) Answer(ctx context.Context, obs Points, q Query) (*Answer, error) {
	return answer(ctx, x, obs, q)
}

// answer is the one switch over the kinds of a query answered whole.
func answer(ctx context.Context, x asker, obs Points, q Query) (*Answer, error) {
	a := &Answer{}
	var err error
	a.Kind, _ = q.Kind()
	switch a.Kind {
	case stream.KindNearest:
		a.Nearest = &Result{}
		err = x.NearestInto(ctx, obs, a.Nearest)
	case stream.KindKNearest:
		a.K = &KResult{K: q.Asked()}
		if err = x.KNearestInto(ctx, obs, q.MaxMetres, a.K); err == nil && q.ExcludeSelf {
			a.K = a.K.WithoutSelf()
		}
	default:
		a.Within, err = x.within(ctx, obs, q.RadiusMetres, q.List)
		if err == nil && q.ExcludeSelf {
			a.Within = a.Within.WithoutSelf()
		}
	}
	if err != nil {
		return nil, err
	}
	return a, nil
}
