package numpyio

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/geoknn/geoknn/internal/parallel"
	"github.com/geoknn/geoknn/pointio"
	"github.com/geoknn/geoknn/pointio/internal/check"
	"github.com/paulmach/orb"
)

// npyMeta is one NumPy array as stored in a .npy file: its element type
// ('<f8', '<f4', big-endian '>' too), its order and its shape.
type npyMeta struct {
	descr   string
	fortran bool
	shape   []int
}

// NPYMagic starts every .npy array.
const NPYMagic = "\x93NUMPY"

var (
	npyDescr   = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	npyFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// readNPYHeader reads an NPY header (format versions 1 to 3).
func readNPYHeader(r io.Reader) (npyMeta, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil || string(pre[:6]) != NPYMagic {
		return npyMeta{}, errors.New("not a NumPy .npy array (no \\x93NUMPY magic)")
	}
	var n int
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return npyMeta{}, err
		}
		n = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return npyMeta{}, err
		}
		n = int(binary.LittleEndian.Uint32(b[:]))
	default:
		return npyMeta{}, fmt.Errorf("NumPy format version %d.%d is not known", pre[6], pre[7])
	}
	if n > 1<<20 {
		return npyMeta{}, fmt.Errorf("NumPy header of %d bytes", n)
	}
	h := make([]byte, n)
	if _, err := io.ReadFull(r, h); err != nil {
		return npyMeta{}, err
	}
	return parseNPYHeader(string(h))
}

// parseNPYHeader parses the header's dict. A key given twice takes its
// last value, as NumPy's reader (a Python dict literal) does.
func parseNPYHeader(h string) (npyMeta, error) {
	d, f, s := lastMatch(npyDescr, h), lastMatch(npyFortran, h), lastMatch(npyShape, h)
	if d == nil || f == nil || s == nil {
		return npyMeta{}, fmt.Errorf("NumPy header %q lacks descr, fortran_order or shape", h)
	}
	a := npyMeta{descr: d[1], fortran: f[1] == "True"}
	for _, dim := range strings.Split(s[1], ",") {
		if dim = strings.TrimSpace(dim); dim == "" {
			continue
		}
		v, err := strconv.Atoi(dim)
		if err != nil || v < 0 {
			return npyMeta{}, fmt.Errorf("NumPy shape (%s) is not a shape", s[1])
		}
		a.shape = append(a.shape, v)
	}
	return a, nil
}

// lastMatch is re's last match in h and its groups (nil: none).
func lastMatch(re *regexp.Regexp, h string) []string {
	all := re.FindAllStringSubmatch(h, -1)
	if len(all) == 0 {
		return nil
	}
	return all[len(all)-1]
}

// elem is the size of one element and its decoder, for float64 and
// float32 arrays of either byte order.
func (a npyMeta) elem() (int, func([]byte) float64, error) {
	var order binary.ByteOrder = binary.LittleEndian
	switch {
	case strings.HasPrefix(a.descr, ">"):
		order = binary.BigEndian
	case strings.HasPrefix(a.descr, "<"), strings.HasPrefix(a.descr, "="), strings.HasPrefix(a.descr, "|"):
	default:
		return 0, nil, fmt.Errorf("NumPy dtype %q: want float64 ('<f8') or float32 ('<f4')", a.descr)
	}
	switch a.descr[1:] {
	case "f8":
		return 8, func(b []byte) float64 { return math.Float64frombits(order.Uint64(b)) }, nil
	case "f4":
		return 4, func(b []byte) float64 { return float64(math.Float32frombits(order.Uint32(b))) }, nil
	}
	return 0, nil, fmt.Errorf("NumPy dtype %q: want float64 ('<f8') or float32 ('<f4')", a.descr)
}

// len is the number of elements, or -1 beyond 2^40 (the shape of a
// corrupt header, or an array no host holds).
func (a npyMeta) len() int {
	n := 1
	for _, d := range a.shape {
		if d != 0 && n > (1<<40)/d {
			return -1
		}
		n *= d
	}
	return n
}

// ReadNPY reads from r, named name in errors, an array of shape (N, 2)
// of latitudes and longitudes in degrees (radians when radians is set;
// float64 or float32, either order), row by row, as [longitude,
// latitude] points in degrees. sizeHint, r's size when known (else 0),
// bounds what a crafted header can make it allocate.
func ReadNPY(r io.Reader, name string, sizeHint int64, radians bool) ([]orb.Point, error) {
	a, err := readNPYHeader(r)
	if err != nil {
		return nil, npyError(name, err)
	}
	if len(a.shape) != 2 || a.shape[1] != 2 {
		return nil, npyError(name, fmt.Errorf("array of shape %v: want (N, 2), latitude then longitude in degrees a row", a.shape))
	}
	cols, err := readColumns(bufio.NewReaderSize(r, 1<<20), a, name, 2, sizeHint)
	if err != nil {
		return nil, err
	}
	return pointsOf(name, cols[0], cols[1], radians)
}

// readColumns reads an array of k columns (shape (N, k), or (N,) for one)
// into one slice a column.
// sizeHint (the file's size, 0 if unknown) sizes the buffer up front.
func readColumns(r io.Reader, a npyMeta, name string, k int, sizeHint int64) ([][]float64, error) {
	size, decode, err := a.elem()
	if err != nil {
		return nil, npyError(name, err)
	}
	total := a.len()
	n := total / k
	need := uint64(n) * uint64(size*k)
	if total < 0 || need > 1<<40 {
		return nil, npyError(name, fmt.Errorf("array of shape %v is too large", a.shape))
	}
	// Read what is there, up to the size the header claims: a header that
	// claims more than the file holds costs no more than the file.
	// (Room for bytes.MinRead more: ReadFrom grows a full buffer before
	// it sees the end, which would copy all of it.)
	var buf bytes.Buffer
	buf.Grow(int(min(need, uint64(max(sizeHint, 0)))) + bytes.MinRead)
	if _, err := buf.ReadFrom(io.LimitReader(r, int64(need))); err != nil {
		return nil, npyError(name, err)
	}
	raw := buf.Bytes()
	if uint64(len(raw)) < need {
		return nil, npyError(name, fmt.Errorf("the data ends early (%d of %d bytes)", len(raw), need))
	}
	cols := make([][]float64, k)
	for c := range cols {
		cols[c] = make([]float64, n)
		// C order keeps a row's values together, Fortran a column's.
		at, step := c*size, k*size
		if a.fortran {
			at, step = c*n*size, size
		}
		col := cols[c]
		parallel.Blocks(n, 1<<16, 0, func(_, lo, hi int) {
			if a.descr == "<f8" {
				decodeLE64(col[lo:hi], raw, at+lo*step, step)
				return
			}
			for i := lo; i < hi; i++ {
				col[i] = decode(raw[at+i*step : at+i*step+size])
			}
		})
	}
	return cols, nil
}

// decodeLE64 is the common case, little-endian float64, without a call a
// value.
func decodeLE64(dst []float64, raw []byte, at, step int) {
	for i := range dst {
		dst[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[at+i*step:]))
	}
}

// pointsOf checks and pairs latitude and longitude columns, in degrees or
// (radians) radians.
func pointsOf(name string, lat, lon []float64, radians bool) ([]orb.Point, error) {
	if len(lat) == 0 {
		return nil, check.FileError(name, "no points")
	}
	rule := newNPYRule(radians)
	pts := make([]orb.Point, len(lat))
	bad := firstBad(len(pts), func(lo, hi int) int {
		for i := lo; i < hi; i++ {
			if !rule.ok(lat[i], lon[i]) {
				return i
			}
			la, ln := rule.degrees(lat[i], lon[i])
			pts[i] = orb.Point{ln, la}
		}
		return -1
	})
	if bad >= 0 {
		return nil, rule.err(name, bad, lat[bad], lon[bad])
	}
	return pts, nil
}

// npyRule checks and converts NumPy coordinates: degrees, or radians,
// whose float32 rounding of pi/2 and pi (up by 4.4e-8 and 8.7e-8) is
// allowed and clamped once in degrees.
type npyRule struct {
	latMax, lonMax, scale float64
	radians               bool
}

func newNPYRule(radians bool) npyRule {
	if radians {
		return npyRule{math.Pi/2 + 1e-7, math.Pi + 1e-7, 180 / math.Pi, true}
	}
	return npyRule{90, 180, 1, false}
}

func (r npyRule) ok(la, ln float64) bool {
	return la >= -r.latMax && la <= r.latMax && ln >= -r.lonMax && ln <= r.lonMax
}

// degrees is a valid row in degrees.
func (r npyRule) degrees(la, ln float64) (lat, lon float64) {
	return max(-90, min(90, la*r.scale)), max(-180, min(180, ln*r.scale))
}

// err is the error of row i, (la, ln) not ok.
func (r npyRule) err(name string, i int, la, ln float64) error {
	if !(la >= -r.latMax && la <= r.latMax) {
		return rowError(name, i, "lat", la, r.latMax, r.radians)
	}
	return rowError(name, i, "lon", ln, r.lonMax, r.radians)
}

// firstBad runs check over blocks of [0, n) on every core; each returns
// its first bad index (or -1) and may stop there. It returns the lowest
// bad index, or -1.
func firstBad(n int, check func(lo, hi int) int) int {
	bad := make([]int, parallel.Workers(n, 1<<14, 0))
	for w := range bad {
		bad[w] = n
	}
	parallel.Blocks(n, 1<<14, 0, func(w, lo, hi int) {
		if i := check(lo, hi); i >= 0 {
			bad[w] = min(bad[w], i)
		}
	})
	if i := slices.Min(bad); i < n {
		return i
	}
	return -1
}

func rowError(name string, i int, field string, v, limit float64, radians bool) error {
	reason := check.OutOfRange(limit)
	if radians {
		reason = fmt.Sprintf("out of range [-%.7g, %.7g] (radians, pi/2 or pi and float32 rounding)", limit, limit)
	}
	return &pointio.InputError{File: name, Row: int64(i) + 1, Feature: -1, Point: -1, Field: field,
		Value: strconv.FormatFloat(v, 'g', -1, 64), Reason: reason}
}

// readNPZ reads a NumPy archive: arrays named as latitude and longitude
// columns are (lat and lon, lng, latitude, ... as in CSV), or its one
// array of shape (N, 2).
func readNPZ(r io.ReaderAt, size int64, name string, opts pointio.ReadOptions) ([]orb.Point, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, npyError(name, fmt.Errorf("not a NumPy .npz archive: %w", err))
	}
	files := map[string]*zip.File{}
	var names []string
	for _, f := range zr.File {
		n := strings.TrimSuffix(path.Base(f.Name), ".npy")
		files[n] = f
		names = append(names, n)
	}
	if len(names) == 1 {
		rc, err := files[names[0]].Open()
		if err != nil {
			return nil, npyError(name, err)
		}
		defer rc.Close()
		pts, err := ReadNPY(rc, name+":"+names[0], entryHint(files[names[0]]), opts.Radians)
		if err == nil {
			err = finishMember(rc, name+":"+names[0])
		}
		if err != nil {
			// The member's end (its CRC, or deflate's last block) failed
			// after the array: the array is not to be trusted either.
			return nil, err
		}
		return pts, nil
	}
	latCol, lonCol, err := pointio.LatLonColumns(name, names, opts)
	if err != nil {
		return nil, err
	}
	lat, err := openNPZMember(files[names[latCol]], name)
	if err != nil {
		return nil, err
	}
	defer lat.rc.Close()
	lon, err := openNPZMember(files[names[lonCol]], name)
	if err != nil {
		return nil, err
	}
	defer lon.rc.Close()
	// Both headers are checked, against each other and against the zip
	// directory, before either array is allocated: a crafted archive
	// costs no more than its own size.
	if lat.meta.len() != lon.meta.len() {
		return nil, npyError(name, fmt.Errorf("%d latitudes and %d longitudes", lat.meta.len(), lon.meta.len()))
	}
	latCols, err := lat.read()
	if err != nil {
		return nil, err
	}
	lonCols, err := lon.read()
	if err != nil {
		return nil, err
	}
	return pointsOf(name, latCols, lonCols, opts.Radians)
}

// entryHint is a size hint for a zip entry that a crafted archive cannot
// turn into a huge allocation: the size it declares, at most what deflate
// can expand its compressed bytes to.
func entryHint(f *zip.File) int64 {
	return int64(min(f.UncompressedSize64, 1032*f.CompressedSize64+1024, 1<<30))
}

// npzMember is one array of shape (N,) of an archive, its header read.
type npzMember struct {
	f    *zip.File
	what string
	rc   io.ReadCloser
	meta npyMeta
}

// openNPZMember opens f and reads its header, refusing one whose data
// would not fit the size the zip directory gives the member (nor what
// deflate can expand its compressed bytes to). The caller closes rc.
func openNPZMember(f *zip.File, name string) (*npzMember, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, npyError(name, err)
	}
	m := &npzMember{f: f, what: name + ":" + strings.TrimSuffix(path.Base(f.Name), ".npy"), rc: rc}
	cr := &countingReader{r: rc}
	if m.meta, err = readNPYHeader(cr); err != nil {
		rc.Close()
		return nil, npyError(m.what, err)
	}
	if len(m.meta.shape) != 1 {
		rc.Close()
		return nil, npyError(m.what, fmt.Errorf("array of shape %v: want (N,)", m.meta.shape))
	}
	size, _, err := m.meta.elem()
	if err != nil {
		rc.Close()
		return nil, npyError(m.what, err)
	}
	room := min(f.UncompressedSize64, 1032*f.CompressedSize64+1024)
	if n := m.meta.len(); n < 0 || uint64(cr.n)+uint64(n)*uint64(size) > room {
		rc.Close()
		return nil, npyError(m.what, fmt.Errorf("the header declares %d values (shape %v), more than the archive's %d bytes for it hold",
			n, m.meta.shape, room))
	}
	return m, nil
}

// read reads the member's array.
func (m *npzMember) read() ([]float64, error) {
	br := bufio.NewReaderSize(m.rc, 1<<20)
	cols, err := readColumns(br, m.meta, m.what, 1, entryHint(m.f))
	if err != nil {
		return nil, err
	}
	return cols[0], finishMember(br, m.what)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

func npyError(name string, err error) error {
	return &pointio.InputError{File: name, Feature: -1, Point: -1, Reason: err.Error()}
}
