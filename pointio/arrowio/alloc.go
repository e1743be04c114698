package arrowio

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/geoknn/geoknn/internal/sysmem"
)

// cappedAllocator refuses, by a panic (allocRefused) that recoverCorrupt
// turns into an error naming the file, any single allocation above
// limit: a corrupt message header or Parquet page can claim gigabytes
// (8.8 GB from one flipped byte, #41 C2), which the Go allocator would
// try to map and the process could not survive. The Arrow IPC and the
// Parquet readers share it.
type cappedAllocator struct {
	limit  int
	memory bool // limit is the memory available, below what the file could need
}

// allocRefused is the panic of a refused allocation.
type allocRefused struct {
	size, limit int
	memory      bool
}

func (r allocRefused) Error() string {
	if r.memory {
		return fmt.Sprintf("a buffer of %d bytes needed, more than the %d of memory available", r.size, r.limit)
	}
	return fmt.Sprintf("a buffer of %d bytes claimed, more than the %d the file could need", r.size, r.limit)
}

func (a *cappedAllocator) Allocate(size int) []byte {
	if size > a.limit {
		panic(allocRefused{size, a.limit, a.memory})
	}
	return memory.DefaultAllocator.Allocate(size)
}

func (a *cappedAllocator) Reallocate(size int, b []byte) []byte {
	if size > a.limit {
		panic(allocRefused{size, a.limit, a.memory})
	}
	return memory.DefaultAllocator.Reallocate(size, b)
}

func (a *cappedAllocator) Free(b []byte) { memory.DefaultAllocator.Free(b) }

// corruptReason is the reason an error gives for a panic p recovered
// while reading a corrupt file of format: the refused allocation's
// figures, or nothing more (a Go runtime error's text says nothing to
// the user). A buffer the file could need but memory cannot hold is
// said so, not called corrupt.
func corruptReason(format string, p any) string {
	if r, ok := p.(allocRefused); ok && r.memory {
		return r.Error()
	}
	if r, ok := p.(allocRefused); ok {
		return "corrupt " + format + " file: " + r.Error()
	}
	return "corrupt " + format + " file"
}

// capped is an allocator of at most limit bytes a buffer, and less where
// less memory is available: no single buffer larger can be taken anyway,
// so it is refused with its figures rather than ending the process out
// of memory.
func capped(limit int64) *cappedAllocator {
	limit = max(min(limit, 1<<40), 1<<20)
	if avail, ok := sysmem.Available(); ok && uint64(limit) > avail {
		return &cappedAllocator{limit: int(max(avail, 1<<20)), memory: true}
	}
	return &cappedAllocator{limit: int(limit)}
}

// parquetAllocLimit is the largest buffer reading a Parquet file of size
// bytes and footer md can need: a row group's decoded column (8 bytes a
// value, 21 a WKB point, with the builders' doubling: 64 bytes a row),
// a column chunk's pages (4 times its declared uncompressed bytes), or 8
// times the file (strings a dictionary repeats), and 64 MiB at least; the
// footer itself was checked to lie inside the file.
func parquetAllocLimit(md *metadata.FileMetaData, size int64) int64 {
	limit := max(int64(64<<20), 8*size)
	for g := range md.NumRowGroups() {
		rg := md.RowGroup(g)
		limit = max(limit, 64*rg.NumRows())
		for c := range rg.NumColumns() {
			if cc, err := rg.ColumnChunk(c); err == nil {
				limit = max(limit, 4*cc.TotalUncompressedSize())
			}
		}
	}
	return limit
}

// openParquetCapped opens a Parquet file (see openParquetFile) whose
// every buffer comes from a cappedAllocator: 64 times the file while the
// footer is read, then parquetAllocLimit. A file whose ARROW:schema
// entry is corrupt is refused here, before pqarrow decodes it.
func openParquetCapped(path string) (*file.Reader, *cappedAllocator, error) {
	if err := notSpecial(path); err != nil {
		return nil, nil, err
	}
	size := fileSize(path)
	alloc := capped(max(64<<20, 64*size))
	rdr, err := file.OpenParquetFile(path, false, file.WithReadProps(parquet.NewReaderProperties(alloc)))
	if err != nil {
		return nil, nil, err
	}
	if err := checkArrowSchema(rdr.MetaData().KeyValueMetadata()); err != nil {
		rdr.Close()
		return nil, nil, err
	}
	*alloc = *capped(parquetAllocLimit(rdr.MetaData(), size))
	return rdr, alloc, nil
}

// openParquetArrow is openParquetCapped with an Arrow reader of its row
// groups, batch rows at a time, its arrays from the same allocator.
func openParquetArrow(path string, batch int64) (*file.Reader, *pqarrow.FileReader, error) {
	rdr, alloc, err := openParquetCapped(path)
	if err != nil {
		return nil, nil, inputError(path, "not a readable Parquet file", err)
	}
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: batch}, alloc)
	if err != nil {
		rdr.Close()
		return nil, nil, inputError(path, "not a readable Parquet file", err)
	}
	return rdr, fr, nil
}
