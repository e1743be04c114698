package csvio

import (
	"fmt"

	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/internal/check"
)

// widthError is the InputError for rec, a record whose field count is not
// the header's: "10,20,30" under "lat,lon" may be a shifted column or a
// decimal comma, and a tool that reads it anyway answers a wrong point.
// Python's csv.DictReader and GDAL keep such rows; pandas refuses extra
// fields, and refusing both is what makes the column a row's meaning
// certain.
func (r *csvRows) widthError(rec []string) *pointio.InputError {
	line, _ := r.cr.FieldPos(0)
	what := "short row"
	if len(rec) > r.width {
		what = "long row"
	}
	return check.LineError(r.name, r.lineBase+line,
		fmt.Sprintf("%s: %d field(s), the header has %d (latitude is column %d, longitude is column %d)",
			what, len(rec), r.width, r.lat+1, r.lon+1))
}
