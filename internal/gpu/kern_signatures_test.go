package gpu

import (
	"regexp"
	"strings"
	"testing"

	"github.com/geoknn/geoknn/internal/kernels"
)

// ptxParams matches one PTX parameter declaration, e.g. ".param .u64 x_param_0".
var ptxParams = regexp.MustCompile(`\.param\s+\.([a-z]\d+)\s`)

// entries returns every kernel entry of a PTX file with its parameter
// types.
func entries(ptx string) map[string][]string {
	out := map[string][]string{}
	for _, m := range regexp.MustCompile(`(?s)\.entry\s+(\w+)\s*\((.*?)\)`).FindAllStringSubmatch(ptx, -1) {
		var types []string
		for _, p := range ptxParams.FindAllStringSubmatch(m[2], -1) {
			types = append(types, p[1])
		}
		out[m[1]] = types
	}
	return out
}

// ptxType is the Param a PTX parameter type is filled as.
func ptxType(t string) string {
	switch t {
	case "u32", "s32", "b32":
		return "u32"
	case "u64", "s64", "b64":
		return "u64"
	}
	return t
}

// Every PTX entry is launched with the parameter list its Go signature
// gives (and so with what the GPU engine's argument blocks let the wrappers set), and every
// signature names an entry that exists.
func TestSignaturesMatchPTX(t *testing.T) {
	seen := map[string]bool{}
	for _, name := range kernels.Files {
		ptx, err := kernels.PTX(name)
		if err != nil {
			t.Fatal(err)
		}
		for entry, types := range entries(ptx) {
			seen[entry] = true
			sig, ok := signatures[entry]
			if !ok {
				t.Errorf("%s.ptx: entry %s has no signature (and so no wrapper)", name, entry)
				continue
			}
			var want []string
			for _, p := range sig {
				want = append(want, p.String())
			}
			var got []string
			for _, ty := range types {
				got = append(got, ptxType(ty))
			}
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("%s.ptx: %s(%s), Go signature (%s)", name, entry, strings.Join(got, ", "), strings.Join(want, ", "))
			}
		}
	}
	for entry := range signatures {
		if !seen[entry] {
			t.Errorf("signature %s names no PTX entry", entry)
		}
	}
}

func TestSignatureLookup(t *testing.T) {
	sig, err := signature("map_index")
	if err != nil || len(sig) != 3 {
		t.Errorf("signature(map_index) = %v, %v; want 3 parameters", sig, err)
	}
	if _, err := signature("to_unit_f32"); err == nil {
		t.Error("signature of a missing entry: no error")
	}
}
