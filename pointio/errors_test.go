package pointio

import (
	"errors"
	"testing"
)

func TestInputErrorFormat(t *testing.T) {
	tests := []struct {
		e    InputError
		want string
	}{
		{InputError{File: "cities.csv", Line: 1234, Feature: -1, Point: -1, Field: "lat", Value: "95.2", Reason: "out of range [-90, 90]"},
			`cities.csv:1234: latitude "95.2" out of range [-90, 90]`},
		{InputError{File: "points.geojson", Feature: 17, Point: -1, Field: "lon", Value: "181", Reason: "out of range [-180, 180]"},
			`points.geojson: feature 17: longitude 181 out of range [-180, 180]`},
		{InputError{File: "p.geojson", Feature: 3, Point: 2, Field: "lat", Value: "-91", Reason: "out of range [-90, 90]"},
			`p.geojson: feature 3: point 2: latitude -91 out of range [-90, 90]`},
		{InputError{File: "p.geojson", Feature: -1, Point: -1, Reason: "no points"}, `p.geojson: no points`},
		{InputError{File: "-", Line: 3, Feature: -1, Point: -1, Field: "lat", Value: "95", Reason: "out of range [-90, 90]"},
			`standard input:3: latitude "95" out of range [-90, 90]`},
		{InputError{File: "b.parquet", Row: 2, Feature: -1, Point: -1, Field: "lon", Reason: "missing (null)"},
			`b.parquet: row 2: longitude missing (null)`},
		{InputError{Feature: -1, Point: -1, Reason: "no points", Err: errors.New("cause")}, `<input>: no points: cause`},
	}
	for _, tt := range tests {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}
