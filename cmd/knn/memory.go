package main

import (
	"fmt"

	"github.com/geoknn/geoknn/internal/sysmem"
	"github.com/geoknn/geoknn/sphere"
	"github.com/geoknn/geoknn/stream"
)

// Host memory a query's plan takes, by what it holds. The CPU engine's
// references cost their columns, unit vectors, the merged set, the grid or
// k-d tree and the plan's sampled indexes: the peak RSS of knn run
// --engine cpu --obs 2^12 was 1.65 GB at --ref 2^22 and 2.75 GB at 2^23
// (about 330 bytes a reference, more at small sizes), rounded up here.
// The GPU engine keeps only the columns and unit vectors on the host.
const (
	cpuRefBytes  = 512
	gpuRefBytes  = 64
	hostColBytes = 16 // float64 latitude and longitude
	planBase     = 64 << 20
)

// planMemory is the host memory a run of f over nObs observations and nRef
// references needs, by part.
type planMemory struct {
	answers, refs, points uint64
}

func (p planMemory) total() uint64 { return p.answers + p.refs + p.points + planBase }

// estimate is the plan of f's query over nObs and nRef points; obsOnHost
// says the observations are held as columns (a file, or --host-points).
func (f *runFlags) estimate(nObs, nRef int, obsOnHost bool) planMemory {
	var p planMemory
	perObs := uint64(8) // the nearest: a uint32 index and a float32 distance
	switch kind, k := f.q.Kind(); kind {
	case stream.KindWithinCounts, stream.KindWithinLists:
		perObs = 4 // a count; the lists grow with what they find
	case stream.KindKNearest:
		perObs = 8 * uint64(k+1)
	}
	p.answers = uint64(nObs) * perObs
	perRef := uint64(cpuRefBytes)
	if f.engine == "gpu" {
		perRef = gpuRefBytes
	}
	p.refs = uint64(nRef) * (perRef + hostColBytes)
	if obsOnHost {
		p.points = uint64(nObs) * hostColBytes
	}
	return p
}

// checkPlanMemory refuses a run whose plan needs more host memory than is
// available, naming the estimate, its parts and the limit, before the
// memory is taken (rather than growing until the kernel's OOM killer
// ends it).
func (f *runFlags) checkPlanMemory(nObs, nRef int, obsOnHost bool) error {
	return f.checkPlanMemoryHeld(nObs, nRef, obsOnHost, 0)
}

// checkPlanMemoryHeld is checkPlanMemory once held bytes of the answers
// are already taken (made while the engine started): the memory available
// no longer counts them, so neither does the part still to take.
func (f *runFlags) checkPlanMemoryHeld(nObs, nRef int, obsOnHost bool, held uint64) error {
	avail, ok := sysmem.Available()
	p := f.estimate(nObs, nRef, obsOnHost)
	need := p.total() - min(held, p.answers)
	if !ok || need <= avail {
		return nil
	}
	return fmt.Errorf("run: --obs %d --ref %d: about %s of memory needed (answers %s, references and their index %s, points %s), more than the %s available on this host",
		nObs, nRef, bytesText(p.total()), bytesText(p.answers), bytesText(p.refs), bytesText(p.points), bytesText(avail+min(held, p.answers)))
}

// checkCountsMemory is checkPlanMemory before any work, where --obs and
// --ref are counts (files are checked once read).
func (f *runFlags) checkCountsMemory() error {
	nObs, obsErr := countOf(f.obs)
	nRef, refErr := countOf(f.ref)
	if obsErr != nil || refErr != nil || nObs > maxObservations || nRef > maxReferences {
		return nil // loading says what is wrong with them
	}
	_, indexed := sphere.IndexedByName(f.gen)
	return f.checkPlanMemory(nObs, nRef, f.hostPoints || !indexed)
}

// countOf is arg as a count of synthetic points, if it is one.
func countOf(arg string) (int, error) {
	n, isFile, err := resolveArg("", arg)
	if err == nil && isFile {
		err = fmt.Errorf("a file")
	}
	return n, err
}
