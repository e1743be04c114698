package formats

import "testing"

func BenchmarkReadFileCities(b *testing.B) {
	path, _ := realData(b, "cities.csv")
	for b.Loop() {
		if _, err := ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
}
