package arrowio

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/geoknn/geoknn/internal/sysmem"
	"github.com/geoknn/geoknn/pointio"
	"github.com/paulmach/orb"
	"golang.org/x/sync/errgroup"
)

// ReadFile reads the points of a Parquet or Arrow IPC file (Handles says
// which files), as [longitude, latitude] pairs in degrees in row order.
// For Parquet: the primary geometry of a GeoParquet file
// (points, WKB or the native "point" encoding, in longitude/latitude), or
// else the latitude and longitude columns, named as csvio.Read names
// them (float or double, degrees), row groups read in parallel; for Arrow
// IPC (file or stream format): the latitude and longitude columns. When
// ctx is done the reading stops and ctx's error comes back.
func ReadFile(ctx context.Context, path string) ([]orb.Point, error) {
	return ReadFileWith(ctx, path, pointio.ReadOptions{})
}

// readParquet reads the points, and into ids (when opts.IDColumn names a
// column) that column's values as text.
func readParquet(ctx context.Context, path string, opts pointio.ReadOptions, ids *[]string) ([]orb.Point, error) {
	src, err := readParquetSource(ctx, path, opts, false)
	if err != nil {
		return nil, err
	}
	if ids != nil {
		*ids = src.ids
	}
	return src.pts, nil
}

// ReadFileRadians is ReadFileIDs that returns the points as latitude and
// longitude columns in radians, what the engine reads: a Parquet file goes
// into them a row group at a time, never held as points as well.
func ReadFileRadians(ctx context.Context, path string, opts pointio.ReadOptions) (lat, lon []float64, ids []string, err error) {
	if spoolable(path) {
		type read struct {
			lat, lon []float64
			ids      []string
		}
		r, err := readSpooled(ctx, path, func(tmp string) (read, error) {
			lat, lon, ids, err := ReadFileRadians(ctx, tmp, opts)
			return read{lat, lon, ids}, err
		})
		return r.lat, r.lon, r.ids, err
	}
	if isIPC(path) {
		reserve := func(n int) { lat, lon = make([]float64, 0, n), make([]float64, 0, n) }
		err := readIPC(ctx, path, opts, &ids, reserve, func(pts []orb.Point) {
			lat, lon = pointio.AppendRadiansParallel(lat, lon, pts)
		})
		if err != nil {
			return nil, nil, nil, err
		}
		return lat, lon, ids, nil
	}
	src, err := readParquetSource(ctx, path, opts, true)
	if err != nil {
		return nil, nil, nil, err
	}
	return src.radLat, src.radLon, src.ids, nil
}

// readParquetSource reads the file into src.pts, or with radians into
// src.radLat and src.radLon, and the ids into src.ids.
func readParquetSource(ctx context.Context, path string, opts pointio.ReadOptions, radians bool) (*columnSource, error) {
	return readParquetRange(ctx, path, opts, radians, 0, -1)
}

// readParquetRange is readParquetSource for the row groups that hold rows
// [lo, hi) (hi < 0: to the end): src holds rows [src.base, ...) of the
// file, whole row groups.
func readParquetRange(ctx context.Context, path string, opts pointio.ReadOptions, radians bool, lo, hi int64) (src *columnSource, err error) {
	if path == "-" {
		return nil, inputError("standard input", "Parquet from standard input: give the file's name (Parquet is read from its end)", nil)
	}
	defer recoverCorrupt(path, &err)
	rdr, err := openParquetFile(path)
	if err != nil {
		return nil, inputError(path, "not a readable Parquet file", err)
	}
	defer rdr.Close()
	if src, err = parquetSourceOf(path, rdr, opts); err != nil {
		return nil, err
	}
	starts := make([]int64, rdr.NumRowGroups()+1)
	for g := range rdr.NumRowGroups() {
		starts[g+1] = starts[g] + rdr.MetaData().RowGroup(g).NumRows()
	}
	n := starts[len(starts)-1]
	if hi < 0 {
		hi = n
	}
	if err := checkRows(path, starts, fileSize(path)); err != nil {
		return nil, err
	}
	if err := verifyParquet(path, rdr, src.leaves(rdr), starts); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, inputError(path, "no points", nil)
	}
	if lo < 0 || hi < lo || hi > n {
		return nil, inputError(path, fmt.Sprintf("rows [%d, %d) of %d", lo, hi, n), nil)
	}
	// The row groups [g0, g1) hold rows [lo, hi).
	g0, g1 := 0, len(starts)-1
	for g0 < g1 && starts[g0+1] <= lo {
		g0++
	}
	for g1 > g0 && starts[g1-1] >= hi {
		g1--
	}
	src.base = starts[g0]
	span := starts[g1] - src.base
	if err := checkMemory(path, span); err != nil {
		return nil, err
	}
	if radians {
		src.radLat, src.radLon = make([]float64, span), make([]float64, span)
	} else {
		src.pts = make([]orb.Point, span)
	}
	if src.id != "" {
		src.ids = make([]string, span)
	}
	eg, ctx := errgroup.WithContext(ctx)
	workers := max(1, min(runtime.GOMAXPROCS(0), g1-g0))
	for w := range workers {
		eg.Go(func() (err error) {
			defer recoverCorrupt(path, &err)
			return src.readGroups(ctx, g0+w, g1, workers, starts, src.pts)
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	return src, nil
}

// ParquetRows is the number of points in the Parquet file at path, from
// its metadata: what a process needs to read its own share of a file that
// several share (ReadFileRadiansRows).
func ParquetRows(path string) (n int64, err error) {
	defer recoverCorrupt(path, &err)
	rdr, err := openParquetFile(path)
	if err != nil {
		return 0, inputError(path, "not a readable Parquet file", err)
	}
	defer rdr.Close()
	return rdr.NumRows(), nil
}

// ReadFileRadiansRows is ReadFileRadians for rows [lo, hi) of a Parquet
// file: only the row groups that hold them are read, and an error names
// its row in the whole file.
func ReadFileRadiansRows(ctx context.Context, path string, opts pointio.ReadOptions, lo, hi int64) (lat, lon []float64, ids []string, err error) {
	src, err := readParquetRange(ctx, path, opts, true, lo, hi)
	if err != nil {
		return nil, nil, nil, err
	}
	a, b := lo-src.base, hi-src.base
	if src.ids != nil {
		ids = src.ids[a:b]
	}
	return src.radLat[a:b], src.radLon[a:b], ids, nil
}

// checkRows refuses row counts that cannot be right, before allocating:
// negative ones, or more than 64 rows a byte of the file (no point data
// compresses so far: a corrupt footer).
func checkRows(path string, starts []int64, size int64) error {
	for g := 1; g < len(starts); g++ {
		if starts[g] < starts[g-1] {
			return inputError(path, fmt.Sprintf("corrupt Parquet file: row group %d has %d rows", g-1, starts[g]-starts[g-1]), nil)
		}
	}
	n := starts[len(starts)-1]
	if size > 0 && n > 64*size+1024 {
		return inputError(path, fmt.Sprintf("corrupt Parquet file: %d rows in %d bytes", n, size), nil)
	}
	return nil
}

// checkChunks refuses a row group whose row count is not its columns':
// every value of a column that does not repeat is a row (nulls counted),
// and the library would read only the rows the row group declares,
// dropping the rest without a word.
func checkChunks(path string, rdr *file.Reader, leaves []int) error {
	md := rdr.MetaData()
	for g := range rdr.NumRowGroups() {
		rg := md.RowGroup(g)
		for _, leaf := range leaves {
			if md.Schema.Column(leaf).MaxRepetitionLevel() > 0 {
				continue
			}
			cc, err := rg.ColumnChunk(leaf)
			if err != nil {
				return inputError(path, fmt.Sprintf("corrupt Parquet file: row group %d", g), err)
			}
			if cc.NumValues() != rg.NumRows() {
				return inputError(path, fmt.Sprintf("corrupt Parquet file: row group %d declares %d rows, its column %q holds %d values",
					g, rg.NumRows(), md.Schema.Column(leaf).Path(), cc.NumValues()), nil)
			}
		}
	}
	return nil
}

// checkMemory refuses to read more rows than the host's memory holds at 16
// bytes a point.
func checkMemory(path string, rows int64) error {
	if avail, ok := sysmem.Available(); ok && uint64(rows) > avail/16 {
		return inputError(path, fmt.Sprintf("%d rows need %d MiB as points, more than the %d MiB available", rows, rows>>16, avail>>20), nil)
	}
	return nil
}

func fileSize(path string) int64 {
	if fi, err := os.Stat(path); err == nil {
		return fi.Size()
	}
	return 0
}

// columnSource is where a file's points are: a geometry column, or
// latitude and longitude columns.
type columnSource struct {
	path    string
	columns []string // the file's top-level columns
	id      string   // the id column asked for ("": none)
	ids     []string // its values, a point each
	// pts takes the points; or radLat and radLon, when allocated, in
	// radians (ReadFileRadians).
	pts            []orb.Point
	radLat, radLon []float64
	base           int64  // the file's row that pts (or radLat) begins with
	geometry       string // GeoParquet: the primary column
	encoding       string // "WKB" or "point"
	lat, lon       string
	noPages        bool // read the coordinates through arrow-go only (coordPagesOn)
}

// parquetSourceOf finds the points of the file: GeoParquet metadata first,
// then latitude and longitude columns.
func parquetSourceOf(path string, rdr *file.Reader, opts pointio.ReadOptions) (*columnSource, error) {
	sc := rdr.MetaData().Schema
	var names []string
	for i := range sc.Root().NumFields() {
		names = append(names, sc.Root().Field(i).Name())
	}
	src := &columnSource{path: path, columns: names, noPages: !coordPagesOn}
	if err := src.findID(opts.IDColumn); err != nil {
		return nil, err
	}
	if geo := rdr.MetaData().KeyValueMetadata().FindValue("geo"); geo != nil {
		return src, src.fromGeoMetadata(*geo)
	}
	latCol, lonCol, err := pointio.LatLonColumns(path, names, opts)
	if err != nil {
		return nil, err
	}
	src.lat, src.lon = names[latCol], names[lonCol]
	return src, nil
}

// geoMetadata is the part of GeoParquet's "geo" metadata (versions 1.0
// and 1.1) that reading points needs.
type geoMetadata struct {
	Version       string `json:"version"`
	PrimaryColumn string `json:"primary_column"`
	Columns       map[string]struct {
		Encoding      string          `json:"encoding"`
		GeometryTypes []string        `json:"geometry_types"`
		CRS           json.RawMessage `json:"crs"`
	} `json:"columns"`
}

// findID sets the id column: the file's column named (any case) asked.
func (src *columnSource) findID(asked string) error {
	if asked == "" {
		return nil
	}
	for _, c := range src.columns {
		if strings.EqualFold(c, asked) {
			src.id = c
			return nil
		}
	}
	return inputError(src.path, fmt.Sprintf("no id column %q; columns: %q", asked, src.columns), nil)
}

// idsOf writes the id column's values, as text, from the file's row first
// on.
func (src *columnSource) idsOf(c *arrow.Chunked, first int64, n int) error {
	if c == nil || c.Len() != n {
		return inputError(src.path, fmt.Sprintf("corrupt file: id column %q does not hold %d rows", src.id, n), nil)
	}
	at := first - src.base
	for _, chunk := range c.Chunks() {
		for i := range chunk.Len() {
			if !chunk.IsNull(i) {
				src.ids[at] = chunk.ValueStr(i)
			}
			at++
		}
	}
	return nil
}

// hasColumn reports whether the file has a top-level column of that name.
func (src *columnSource) hasColumn(name string) bool {
	return slices.Contains(src.columns, name)
}

func (src *columnSource) fromGeoMetadata(text string) error {
	var meta geoMetadata
	if err := json.Unmarshal([]byte(text), &meta); err != nil {
		return inputError(src.path, "GeoParquet \"geo\" metadata is not valid JSON", err)
	}
	col, ok := meta.Columns[meta.PrimaryColumn]
	if !ok || !src.hasColumn(meta.PrimaryColumn) {
		return inputError(src.path, fmt.Sprintf("GeoParquet metadata names primary column %q, which the metadata does not describe or the file lacks", meta.PrimaryColumn), nil)
	}
	if err := checkGeographicCRS(col.CRS); err != nil {
		return inputError(src.path, fmt.Sprintf("GeoParquet column %q: %v", meta.PrimaryColumn, err), nil)
	}
	switch enc := strings.ToLower(col.Encoding); enc {
	case "wkb", "point":
		src.geometry, src.encoding = meta.PrimaryColumn, enc
	default:
		return inputError(src.path, fmt.Sprintf("GeoParquet column %q has encoding %q: points are read from WKB or the native \"point\" encoding", meta.PrimaryColumn, col.Encoding), nil)
	}
	for _, t := range col.GeometryTypes {
		if t != "Point" && t != "Point Z" {
			return inputError(src.path, fmt.Sprintf("GeoParquet column %q holds %s geometries: only points can be queried", meta.PrimaryColumn, t), nil)
		}
	}
	return nil
}

// checkGeographicCRS accepts GeoParquet's default (no crs: OGC:CRS84), an
// unknown CRS (null) and PROJJSON or strings naming OGC:CRS84 or EPSG:4326;
// coordinates in anything else (a projected CRS in metres) are not
// longitudes and latitudes.
func checkGeographicCRS(raw json.RawMessage) error {
	text := strings.TrimSpace(string(raw))
	if text == "" || text == "null" {
		return nil
	}
	var crs struct {
		Name string `json:"name"`
		ID   struct {
			Authority string `json:"authority"`
			Code      any    `json:"code"`
		} `json:"id"`
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if isLonLatCRS(s) {
			return nil
		}
		return fmt.Errorf("CRS %q is not longitude/latitude on WGS 84 (OGC:CRS84 or EPSG:4326): reproject the file first", s)
	}
	if err := json.Unmarshal(raw, &crs); err != nil {
		return fmt.Errorf("unreadable CRS: %w", err)
	}
	if isLonLatCRS(fmt.Sprintf("%s:%v", crs.ID.Authority, crs.ID.Code)) {
		return nil
	}
	return fmt.Errorf("CRS %q (%s:%v) is not longitude/latitude on WGS 84 (OGC:CRS84 or EPSG:4326): reproject the file first",
		crs.Name, crs.ID.Authority, crs.ID.Code)
}

func isLonLatCRS(id string) bool {
	switch strings.ToUpper(strings.TrimSpace(id)) {
	case "OGC:CRS84", "EPSG:4326", "OGC:CRS:84":
		return true
	}
	return false
}

// readGroups reads row groups first, first+workers, ... below end into pts
// (group g's rows start at starts[g] - src.base), on a file reader of its
// own.
func (src *columnSource) readGroups(ctx context.Context, first, end, workers int, starts []int64, pts []orb.Point) error {
	// Serial within a worker (the workers split the row groups): the
	// library's own goroutines would put its panics on corrupt input out
	// of recoverCorrupt's reach.
	rdr, fr, err := openParquetArrow(src.path, 1<<16)
	if err != nil {
		return err
	}
	defer rdr.Close()
	leaves := src.leaves(rdr)
	var pages *coordPages
	if src.radLat != nil {
		if pages = src.newCoordPages(rdr, fr); pages != nil {
			defer pages.Close()
		}
	}
	var buf []orb.Point
	for g := first; g < end; g += workers {
		if err := ctx.Err(); err != nil {
			return err
		}
		at, to := starts[g]-src.base, starts[g+1]-src.base
		if pages != nil && pages.readGroup(g, src.radLat[at:to], src.radLon[at:to]) == nil {
			continue // the radians straight from the pages (coordPages)
		}
		tbl, err := readGroup(ctx, src.path, fr, leaves, g)
		if err != nil {
			return err
		}
		dst := pts[min(at, int64(len(pts))):min(to, int64(len(pts)))]
		if src.radLat != nil {
			// Radian columns asked for: a row group's points pass through
			// a buffer of this worker's.
			buf = slices.Grow(buf[:0], int(to-at))[:to-at]
			dst = buf
		}
		err = src.decode(tbl, starts[g], dst)
		tbl.Release()
		if err != nil {
			return err
		}
		if src.radLat != nil {
			// Appended in place: the columns' capacity past row at is this
			// group's rows (and the later groups').
			pointio.AppendRadians(src.radLat[at:at], src.radLon[at:at], dst)
		}
	}
	return nil
}

// readGroup reads row group g's columns leaves; an error, or a panic of
// the library on a corrupt page, names the group.
func readGroup(ctx context.Context, path string, fr *pqarrow.FileReader, leaves []int, g int) (tbl arrow.Table, err error) {
	defer recoverCorruptGroup(path, g, &err)
	tbl, err = fr.ReadRowGroups(ctx, leaves, []int{g})
	if err != nil {
		return nil, groupError(path, g, err)
	}
	return tbl, nil
}

// leaves are the file's column (leaf) indices the points are in.
func (src *columnSource) leaves(rdr *file.Reader) []int {
	sc := rdr.MetaData().Schema
	var leaves []int
	for i := range sc.NumColumns() {
		top := strings.SplitN(sc.Column(i).Path(), ".", 2)[0]
		if top == src.geometry || top == src.lat || top == src.lon || top == src.id {
			leaves = append(leaves, i)
		}
	}
	return leaves
}

// decode writes a row group's points (its first row is row first of the
// file) into dst, checking every one.
func (src *columnSource) decode(tbl arrow.Table, first int64, dst []orb.Point) error {
	col := func(name string) *arrow.Chunked {
		idx := tbl.Schema().FieldIndices(name)
		if len(idx) == 0 {
			return nil
		}
		return tbl.Column(idx[0]).Data()
	}
	for _, name := range []string{src.geometry, src.lat, src.lon} {
		if c := col(name); name != "" && (c == nil || c.Len() != len(dst)) {
			return inputError(src.path, fmt.Sprintf("corrupt Parquet file: column %q does not hold the %d rows of its row group", name, len(dst)), nil)
		}
	}
	if src.id != "" {
		if err := src.idsOf(col(src.id), first, len(dst)); err != nil {
			return err
		}
	}
	if src.geometry != "" {
		return src.decodeGeometry(col(src.geometry), first, dst)
	}
	if err := src.decodeFloats(col(src.lat), "lat", first, dst, func(p *orb.Point, v float64) { p[1] = v }); err != nil {
		return err
	}
	return src.decodeFloats(col(src.lon), "lon", first, dst, func(p *orb.Point, v float64) { p[0] = v })
}

// decodeFloats sets one coordinate of every point from a float or double
// column, checking its range.
func (src *columnSource) decodeFloats(c *arrow.Chunked, field string, first int64, dst []orb.Point, set func(*orb.Point, float64)) error {
	limit := 90.0
	if field == "lon" {
		limit = 180
	}
	row := 0
	for _, chunk := range c.Chunks() {
		for i := range chunk.Len() {
			v, err := floatAt(chunk, i)
			if err != nil || !(v >= -limit && v <= limit) {
				return src.valueError(first+int64(row), field, v, err, limit)
			}
			set(&dst[row], v)
			row++
		}
	}
	return nil
}

// floatAt is element i of a float or double column.
func floatAt(a arrow.Array, i int) (float64, error) {
	if a.IsNull(i) {
		return math.NaN(), errors.New("missing (null)")
	}
	switch c := a.(type) {
	case *array.Float64:
		return c.Value(i), nil
	case *array.Float32:
		return float64(c.Value(i)), nil
	}
	return math.NaN(), fmt.Errorf("column of type %s: want float or double degrees", a.DataType())
}

// decodeGeometry reads WKB points or native point structs.
func (src *columnSource) decodeGeometry(c *arrow.Chunked, first int64, dst []orb.Point) error {
	row := 0
	for _, chunk := range c.Chunks() {
		for i := range chunk.Len() {
			p, err := geometryAt(chunk, i)
			if err != nil {
				return &pointio.InputError{File: src.path, Row: first + int64(row) + 1, Feature: -1, Point: -1, Reason: err.Error()}
			}
			if !(p[1] >= -90 && p[1] <= 90) {
				return src.valueError(first+int64(row), "lat", p[1], nil, 90)
			}
			if !(p[0] >= -180 && p[0] <= 180) {
				return src.valueError(first+int64(row), "lon", p[0], nil, 180)
			}
			dst[row] = p
			row++
		}
	}
	return nil
}

// geometryAt is the point at element i of a WKB (binary) or native point
// (struct of x, y) column.
func geometryAt(a arrow.Array, i int) (orb.Point, error) {
	if a.IsNull(i) {
		return orb.Point{}, errors.New("geometry missing (null)")
	}
	switch c := a.(type) {
	case *array.Binary:
		return wkbPoint(c.Value(i))
	case *array.LargeBinary:
		return wkbPoint(c.Value(i))
	case *array.Struct:
		st := c.DataType().(*arrow.StructType)
		x, okx := st.FieldIdx("x")
		y, oky := st.FieldIdx("y")
		if !okx || !oky {
			return orb.Point{}, fmt.Errorf("native point column of type %s: want fields x and y", st)
		}
		lon, err1 := floatAt(c.Field(x), i)
		lat, err2 := floatAt(c.Field(y), i)
		if err := errors.Join(err1, err2); err != nil {
			return orb.Point{}, err
		}
		return orb.Point{lon, lat}, nil
	}
	return orb.Point{}, fmt.Errorf("geometry column of type %s: want WKB (binary) or native points", a.DataType())
}

// wkbPoint decodes an ISO WKB point (2D, or with Z or M, which are
// ignored).
func wkbPoint(b []byte) (orb.Point, error) {
	if len(b) < 5 {
		return orb.Point{}, fmt.Errorf("WKB of %d bytes is not a point", len(b))
	}
	var order binary.ByteOrder = binary.LittleEndian
	if b[0] == 0 {
		order = binary.BigEndian
	}
	kind := order.Uint32(b[1:5])
	if kind%1000 != 1 || kind > 3001 {
		return orb.Point{}, fmt.Errorf("WKB geometry of type %d is not a point", kind)
	}
	if len(b) < 21 {
		return orb.Point{}, fmt.Errorf("WKB point of %d bytes is truncated", len(b))
	}
	x, y := math.Float64frombits(order.Uint64(b[5:13])), math.Float64frombits(order.Uint64(b[13:21]))
	if math.IsNaN(x) && math.IsNaN(y) {
		return orb.Point{}, errors.New("empty point (WKB POINT EMPTY)")
	}
	return orb.Point{x, y}, nil
}

func (src *columnSource) valueError(row int64, field string, v float64, err error, limit float64) error {
	reason, value := fmt.Sprintf("out of range [%g, %g]", -limit, limit), fmt.Sprint(v)
	if err != nil {
		// No value was read (a null, a column of another type): none shown.
		reason, value = err.Error(), ""
	}
	return &pointio.InputError{File: src.path, Row: row + 1, Feature: -1, Point: -1, Field: field,
		Value: value, Reason: reason}
}

// recoverCorrupt turns a panic of the Parquet library on a corrupt file
// into an error naming the file: bad input never takes the process down.
// The panic's own text (a Go runtime error) says nothing to the user.
// recover is called here itself: called from a function this one calls
// (recoverCorruptAs) it returns nil, and the panic goes on.
func recoverCorrupt(path string, err *error) {
	if p := recover(); p != nil {
		*err = inputError(path, corruptReason("Parquet", p), nil)
	}
}

// recoverCorruptGroup is recoverCorrupt for a panic while row group g was
// read, which the error names.
func recoverCorruptGroup(path string, g int, err *error) {
	if p := recover(); p != nil {
		*err = inputError(path, fmt.Sprintf("row group %d: %s", g, corruptReason("Parquet", p)), nil)
	}
}

// recoverCorruptAs is recoverCorrupt for a file of format (Parquet, Arrow
// IPC).
func recoverCorruptAs(path, format string, err *error) {
	if p := recover(); p != nil {
		*err = inputError(path, corruptReason(format, p), nil)
	}
}

func inputError(path, reason string, err error) error {
	err = withoutRuntimeText(err)
	return &pointio.InputError{File: path, Feature: -1, Point: -1, Reason: reason, Err: err}
}

// openParquetFile opens a Parquet file read through ReadAt, not memory
// mapped (arrow-go's other choice): the pages of a mapped file count in
// the process's resident memory as they are read, the whole input by the
// end of a stream (2^25 points against the cities on the CPU: 959 MB peak
// RSS mapped, the input's 537 MB of it), and a file cut short while it is
// read would end the process with SIGBUS where ReadAt returns an error.
func openParquetFile(path string) (*file.Reader, error) {
	rdr, _, err := openParquetCapped(path)
	return rdr, err
}
