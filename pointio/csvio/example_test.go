package csvio_test

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/geoknn/geoknn/pointio/csvio"
)

func ExampleRead() {
	const stations = `name,lat,lon,opened
"Zürich HB, Switzerland",47.3779,8.5403,1847
"Gare du Nord ""Paris""",48.8809,2.3553,1846
`
	pts, err := csvio.Read(strings.NewReader(stations), "stations.csv")
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, p := range pts {
		fmt.Printf("%d: lat %.4f, lon %.4f\n", i, p.Lat(), p.Lon())
	}

	// Errors name the file, the line and the offending value.
	_, err = csvio.Read(strings.NewReader("lat,lon\n47.3779,8.5403\n95.2,8.5\n"), "cities.csv")
	fmt.Println(err)
	// Output:
	// 0: lat 47.3779, lon 8.5403
	// 1: lat 48.8809, lon 2.3553
	// cities.csv:3: latitude "95.2" out of range [-90, 90]
}

func ExampleWriteResults() {
	nearest := []uint32{1, 0}
	metres := []float64{1523.25, 0}
	w := bufio.NewWriter(os.Stdout)
	err := csvio.WriteResults(w, len(nearest), func(i int) (uint32, float64) {
		return nearest[i], metres[i]
	})
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// obs_index,ref_index,distance_m
	// 0,1,1523.250
	// 1,0,0.000
}
