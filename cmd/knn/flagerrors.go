package main

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// flagError is a command line's one mistake, said in one line that names
// the flag with the two dashes the help shows, and a pointer to the help
// rather than the whole of it: a typo should not scroll a hundred lines of
// flags past the user.
func flagError(fs *flag.FlagSet, err error) error {
	msg := err.Error()
	name := fs.Name()
	switch {
	case strings.HasPrefix(msg, "flag provided but not defined: "):
		bad := strings.TrimLeft(strings.TrimPrefix(msg, "flag provided but not defined: "), "-")
		msg = fmt.Sprintf("unknown flag --%s", bad)
		if near := nearestFlags(fs, bad); len(near) > 0 {
			msg += " (did you mean --" + strings.Join(near, " or --") + "?)"
		}
	case strings.HasPrefix(msg, "flag needs an argument: "):
		msg = fmt.Sprintf("--%s needs a value", strings.TrimLeft(strings.TrimPrefix(msg, "flag needs an argument: "), "-"))
	case strings.HasPrefix(msg, "invalid value ") || strings.HasPrefix(msg, "invalid boolean value "):
		// invalid value "x" for flag -k: parse error
		var val, fl string
		rest := strings.TrimPrefix(strings.TrimPrefix(msg, "invalid boolean value "), "invalid value ")
		if i := strings.Index(rest, " for "); i > 0 {
			val, rest = rest[:i], rest[i+len(" for "):]
			rest = strings.TrimPrefix(rest, "flag ")
			if j := strings.Index(rest, ":"); j > 0 {
				fl, rest = strings.TrimLeft(rest[:j], "-"), strings.TrimSpace(rest[j+1:])
			}
		}
		if fl != "" {
			msg = fmt.Sprintf("--%s %s: %s", fl, val, valueProblem(fs.Lookup(fl), rest))
		}
	}
	return usageError{fmt.Errorf("%s: %s\nknn: see 'knn help %s' for every flag", name, msg, name)}
}

// valueProblem says what a flag's value should have been.
func valueProblem(fl *flag.Flag, parseErr string) string {
	if fl == nil {
		return parseErr
	}
	switch fmt.Sprintf("%T", fl.Value) {
	case "*flag.intValue", "*flag.uintValue", "*flag.uint64Value", "*flag.int64Value":
		return "want a whole number"
	case "*flag.float64Value":
		return "want a number"
	case "*flag.boolValue":
		return "a switch takes no value, or =true/=false"
	case "*flag.durationValue":
		return "want a duration such as 30s"
	}
	return parseErr
}

// nearestFlags are the defined flags within two edits of bad (or that it
// starts or ends), nearest first: the "did you mean".
func nearestFlags(fs *flag.FlagSet, bad string) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	fs.VisitAll(func(f *flag.Flag) {
		d := editDistance(strings.ToLower(bad), f.Name)
		limit := 2
		if len(f.Name) <= 2 {
			limit = 1
		}
		if d <= limit || (len(bad) >= 4 && strings.HasPrefix(f.Name, bad)) {
			cs = append(cs, cand{f.Name, d})
		}
	})
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d || cs[i].d == cs[j].d && cs[i].name < cs[j].name })
	var names []string
	for i, c := range cs {
		if i == 3 {
			break
		}
		names = append(names, c.name)
	}
	return names
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// quietFlagSet makes fs report its parse errors only through its error,
// which flagError turns into the one line.
func quietFlagSet(fs *flag.FlagSet) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
}

// didYouMeanCommand is " (did you mean run?)" for a near miss of a command.
func didYouMeanCommand(bad string) string {
	best, bestD := "", 3
	for _, c := range []string{"run", "simulate", "plot", "convert", "devices", "bench", "version", "help"} {
		if d := editDistance(strings.ToLower(bad), c); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}
