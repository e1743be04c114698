package ranks

import (
	"go/build"
	"strings"
	"testing"
)

// The package needs no engine, so that the root package can use it:
// it must not import the root package, nor anything that does.
func TestNoRootImport(t *testing.T) {
	p, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range p.Imports {
		if imp == "github.com/geoknn/geoknn" || strings.HasPrefix(imp, "github.com/geoknn/geoknn/internal/engine") ||
			imp == "github.com/geoknn/geoknn/simulator" {
			t.Errorf("ranks imports %s: the root package could not use it", imp)
		}
	}
}
