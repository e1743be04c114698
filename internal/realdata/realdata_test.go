package realdata

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDirHoldsBothSets(t *testing.T) {
	dir, full, err := Dir()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cities.csv", "airports.csv"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("full=%v: %v", full, err)
		}
	}
}

func TestEnvironmentWins(t *testing.T) {
	t.Setenv("GEOKNN_DATA", "/somewhere")
	if dir, full, err := Dir(); dir != "/somewhere" || !full || err != nil {
		t.Errorf("Dir() = %q, %v, %v", dir, full, err)
	}
}
