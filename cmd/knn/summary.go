package main

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/geoknn/geoknn/stream"
)

// runSummary stands between knn run and standard error when -v is not
// given. The engine's report (index notes, busy times, chunk counts,
// pairs a second) is for whoever tunes the engine: -v prints it as it
// comes. Without -v the summary says, in a user's words, what was
// searched, on what, how long it took and where the answers went; -q says
// nothing at all on success. A failed run shows everything it gathered,
// which is what explains the failure.
type runSummary struct {
	mu    sync.Mutex
	lines []string
	buf   bytes.Buffer
	all   bytes.Buffer
}

func (s *runSummary) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all.Write(p)
	s.buf.Write(p)
	for {
		i := bytes.IndexByte(s.buf.Bytes(), '\n')
		if i < 0 {
			break
		}
		s.lines = append(s.lines, string(s.buf.Next(i + 1)[:i]))
	}
	return len(p), nil
}

// line is the first report line that starts with prefix, without it.
func (s *runSummary) line(prefix string) (string, bool) {
	for _, l := range s.lines {
		if strings.HasPrefix(l, prefix) {
			return strings.TrimSpace(strings.TrimPrefix(l, prefix)), true
		}
	}
	return "", false
}

var (
	cpuEngine = regexp.MustCompile(`^cpu \((\d+) goroutines? on (\d+) cores?\)`)
	gpuEngine = regexp.MustCompile(`^gpu \((.*?)\)(, algorithm|$)`)
	countDesc = regexp.MustCompile(`^(\d+) \((.*?)(, streamed in \d+ chunks?)?\)$`)
	noGPU     = regexp.MustCompile(`^knn: no GPU \((.*)\): running on the CPU$`)
	wroteLine = regexp.MustCompile(`^wrote (.*?) \((\w+)(, (\d+) (rows|observations))?\)`)
)

// print writes the summary of a successful run to w.
func (s *runSummary) print(w io.Writer, f runFlags) {
	s.mu.Lock()
	defer s.mu.Unlock()
	points := func(prefix, noun string) (string, string) {
		v, _ := s.line(prefix)
		if m := countDesc.FindStringSubmatch(v); m != nil {
			if isCount(f.obs) && noun == "observations" || isCount(f.ref) && noun == "references" {
				return m[1], m[1] + " generated " + noun
			}
			return m[1], m[1] + " " + noun + " (" + m[2] + ")"
		}
		return "", noun
	}
	_, obs := points("observations:", "observations")
	_, ref := points("references:", "references")
	what := f.searched(ref, obs)
	if f.q.ExcludeSelf {
		what += ", each point's own left out"
	}
	fmt.Fprintf(w, "searched:     %s\n", what)
	eng, _ := s.line("engine:")
	engine := eng
	if m := cpuEngine.FindStringSubmatch(eng); m != nil {
		engine = fmt.Sprintf("the CPU, %s cores", m[2])
	} else if m := gpuEngine.FindStringSubmatch(eng); m != nil {
		engine = "GPU: " + m[1]
	}
	for _, l := range s.lines {
		if m := noGPU.FindStringSubmatch(l); m != nil {
			engine += " (no GPU: " + m[1] + ")"
		}
	}
	fmt.Fprintf(w, "on:           %s\n", engine)
	if v, ok := s.line("validate:"); ok {
		fmt.Fprintf(w, "validated:    %s\n", v)
	}
	for _, l := range s.lines {
		if m := wroteLine.FindStringSubmatch(l); m != nil && !strings.HasPrefix(l, "wrote trace") {
			rows := ""
			if m[4] != "" {
				rows = ", " + m[4] + " observations"
			}
			fmt.Fprintf(w, "answers:      %s (%s%s)\n", m[1], m[2], rows)
		}
		if strings.HasPrefix(l, "wrote trace ") {
			fmt.Fprintln(w, "trace:        "+strings.TrimPrefix(l, "wrote trace "))
		}
	}
	if t, ok := s.line("total:"); ok {
		fmt.Fprintf(w, "took:         %s\n", t)
	}
}

// searched says what the query looks for among ref, the references, for
// obs, the observations, in a user's words.
func (f runFlags) searched(ref, obs string) string {
	q := f.q
	switch kind, k := q.Kind(); {
	case kind == stream.KindWithinLists:
		return fmt.Sprintf("which of %s lie within %g m of each of %s", ref, q.RadiusMetres, obs)
	case kind == stream.KindWithinCounts:
		return fmt.Sprintf("how many of %s lie within %g m of each of %s", ref, q.RadiusMetres, obs)
	case kind == stream.KindKNearest && (k > 1 || q.MaxMetres > 0):
		limit := ""
		if q.MaxMetres > 0 {
			limit = fmt.Sprintf(" (no farther than %g m)", q.MaxMetres)
		}
		return fmt.Sprintf("the %d nearest of %s%s for each of %s", k, ref, limit, obs)
	}
	return fmt.Sprintf("the nearest of %s for each of %s", ref, obs)
}

// querySummary says what a neighbour query asked, in the flags' units:
// metres, and the k the user asked for (not the one more --exclude-self
// asks of the engine).
func (f runFlags) querySummary(nref int) string {
	self := ""
	if f.q.ExcludeSelf {
		self = ", each observation's own left out"
	}
	kind, k := f.q.Kind()
	if kind == stream.KindWithinCounts || kind == stream.KindWithinLists {
		return fmt.Sprintf("within %g m of %d references%s", f.q.RadiusMetres, nref, self)
	}
	limit := ""
	if f.q.MaxMetres > 0 {
		limit = fmt.Sprintf(" within %g m", f.q.MaxMetres)
	}
	return fmt.Sprintf("%d nearest%s of %d references%s", k, limit, nref, self)
}

// flush writes everything gathered to w, as -v would have shown it.
func (s *runSummary) flush(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Write(s.all.Bytes())
}

// barWriter is where the progress bar draws: the terminal of standard
// error, which the summary does not stand in for.
func (f runFlags) barWriter(stderr io.Writer) io.Writer {
	if f.barOut != nil {
		return f.barOut
	}
	return stderr
}
