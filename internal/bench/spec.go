package bench

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/geoknn/geoknn"
	"github.com/geoknn/geoknn/internal/count"
	"github.com/geoknn/geoknn/sphere"
)

// maxListLen bounds how many values one spec may expand to.
const maxListLen = 4096

// ParseSizes reads a size spec: a comma-separated list whose items are
// counts (see count.Parse) or ranges FROM:TO[:STEP]. STEP is xK (multiply by
// K, K >= 2) or +K (add K, K >= 1); without it a range doubles. A range holds
// FROM and every step from it that does not pass TO (TO itself only when a
// step lands on it). The result is sorted and without duplicates; every
// size must be at least 1.
//
//	2^20:2^27        2^20, 2^21, ..., 2^27
//	2^20:2^27:x4     2^20, 2^22, 2^24, 2^26
//	1000:4000:+1000  1000, 2000, 3000, 4000
//	2^10,2^12,5e4    those three
func ParseSizes(spec string) ([]int, error) {
	return parseList(spec, "x2", func(s string) (int, error) {
		n, err := count.Parse(s)
		if err == nil && n < 1 {
			err = fmt.Errorf("size %q must be at least 1", s)
		}
		return n, err
	})
}

// ParseGPUs reads a GPU-count spec with available GPUs present: a list of
// counts, ranges FROM:TO[:STEP] as in ParseSizes but stepping +1 by default,
// and "all", which stands for available (also as TO: 1:all). Counts above
// available are kept (the sweep skips them with a note). With available 0
// "all" is dropped.
//
//	1,2     one GPU, then two
//	all     every GPU of the host
//	1:all   1, 2, ..., every GPU
//	1:8:x2  1, 2, 4, 8
func ParseGPUs(spec string, available int) ([]int, error) {
	return parseList(spec, "+1", func(s string) (int, error) {
		if strings.EqualFold(strings.TrimSpace(s), "all") {
			return available, nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 1024 {
			return 0, fmt.Errorf("bad GPU count %q (want a number from 1, or all)", s)
		}
		return n, nil
	})
}

func parseList(spec, defStep string, atom func(string) (int, error)) ([]int, error) {
	if strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("empty list")
	}
	var out []int
	for item := range strings.SplitSeq(spec, ",") {
		vals, err := parseItem(strings.TrimSpace(item), defStep, atom)
		if err != nil {
			return nil, err
		}
		out = append(out, vals...)
		if len(out) > maxListLen {
			return nil, fmt.Errorf("%q expands to more than %d values", spec, maxListLen)
		}
	}
	out = slices.DeleteFunc(out, func(v int) bool { return v < 1 }) // "all" with no GPU
	if len(out) == 0 {
		return nil, nil
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// parseItem parses one item of a list: a value, FROM:TO (by defStep) or
// FROM:TO:STEP.
func parseItem(item, defStep string, atom func(string) (int, error)) ([]int, error) {
	parts := strings.Split(item, ":")
	if len(parts) == 1 {
		v, err := atom(item)
		if err != nil {
			return nil, err
		}
		return []int{v}, nil
	}
	if len(parts) > 3 {
		return nil, fmt.Errorf("bad range %q (want FROM:TO or FROM:TO:STEP)", item)
	}
	from, err := atom(parts[0])
	if err != nil {
		return nil, err
	}
	to, err := atom(parts[1])
	if err != nil {
		return nil, err
	}
	step := defStep
	if len(parts) == 3 {
		step = strings.TrimSpace(parts[2])
	}
	return expand(item, from, to, step)
}

func expand(item string, from, to int, step string) ([]int, error) {
	if from > to {
		if to < 1 { // 1:all with no GPU
			return nil, nil
		}
		return nil, fmt.Errorf("range %q runs backwards", item)
	}
	if step == "" {
		return nil, fmt.Errorf("range %q: empty step (want xK or +K)", item)
	}
	k, err := strconv.Atoi(step[1:])
	var next func(int) int
	switch {
	case err != nil:
	case (step[0] == 'x' || step[0] == '*') && k >= 2:
		next = func(v int) int { return v * k }
	case step[0] == '+' && k >= 1:
		next = func(v int) int { return v + k }
	}
	if next == nil {
		return nil, fmt.Errorf("range %q: bad step %q (want xK with K >= 2, or +K with K >= 1)", item, step)
	}
	var out []int
	for v := from; v <= to; v = next(v) {
		out = append(out, v)
		if len(out) > maxListLen {
			return nil, fmt.Errorf("range %q has more than %d values", item, maxListLen)
		}
	}
	return out, nil
}

// Engine names a sweep accepts.
const (
	EngineCPU  = "cpu"
	EngineGPU  = "gpu"
	EngineAuto = "auto" // gpu when a GPU is present, else cpu
)

// ParseEngines reads a comma-separated list of cpu, gpu and auto.
func ParseEngines(spec string) ([]string, error) {
	var out []string
	for _, s := range splitNames(spec) {
		switch s {
		case EngineCPU, EngineGPU, EngineAuto:
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		default:
			return nil, fmt.Errorf("unknown engine %q (want cpu, gpu or auto)", s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no engine given")
	}
	return out, nil
}

// candidateAlgorithms are the names "all" tries, in table order; those that
// geoknn.ParseAlgorithm does not know (yet) are left out.
var candidateAlgorithms = []string{"seed", "brute", "grid"}

// ParseAlgorithms reads a comma-separated list of algorithm names, each
// checked with geoknn.ParseAlgorithm; "all" stands for every algorithm the
// engine knows among seed, brute and grid.
func ParseAlgorithms(spec string) ([]geoknn.Algorithm, error) {
	var out []geoknn.Algorithm
	for _, s := range splitNames(spec) {
		names := []string{s}
		if s == "all" {
			names = names[:0]
			for _, c := range candidateAlgorithms {
				if _, err := geoknn.ParseAlgorithm(c); err == nil {
					names = append(names, c)
				}
			}
		}
		for _, n := range names {
			a, err := geoknn.ParseAlgorithm(n)
			if err != nil {
				return nil, fmt.Errorf("--algo: %w", err)
			}
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no algorithm given")
	}
	return out, nil
}

// GenCities is the generator whose references are the shared cities file
// and whose observations come from the sphere generator.
const GenCities = "cities"

// citiesObsGen generates the observations of the cities cases.
const citiesObsGen = "sphere"

// ParseGenerators reads a comma-separated list of simulator generator names
// (seed, sphere, clustered) and cities.
func ParseGenerators(spec string) ([]string, error) {
	var out []string
	for _, s := range splitNames(spec) {
		if s != GenCities {
			if _, err := sphere.RadiansByName(s); err != nil {
				return nil, fmt.Errorf("--gen %q: unknown generator (want %s or %s)", s,
					strings.Join(sphere.Names(), ", "), GenCities)
			}
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no generator given")
	}
	return out, nil
}

func splitNames(spec string) []string {
	var out []string
	for s := range strings.SplitSeq(spec, ",") {
		if s = strings.ToLower(strings.TrimSpace(s)); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Shape is a cross product of observation and reference sizes.
type Shape struct {
	Obs []int `json:"obs"`
	Ref []int `json:"ref"`
}

// sizePairs lists the (obs, ref) pairs of the shapes in order, without
// repeats.
func sizePairs(shapes []Shape) [][2]int {
	var out [][2]int
	seen := map[[2]int]bool{}
	for _, s := range shapes {
		for _, o := range s.Obs {
			for _, r := range s.Ref {
				if p := [2]int{o, r}; !seen[p] {
					seen[p] = true
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// FormatCount writes n as 2^k when it is a power of two above 2^9, else as
// digits with thousands separators.
func FormatCount(n int) string {
	if n >= 1<<10 && n&(n-1) == 0 {
		return fmt.Sprintf("2^%d", bitsLen(n)-1)
	}
	s := strconv.Itoa(n)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func bitsLen(n int) int {
	k := 0
	for ; n > 0; n >>= 1 {
		k++
	}
	return k
}
