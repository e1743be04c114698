package arrowio

import (
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/parquet/file"
)

// verifyParquet is the one set of footer checks every Parquet reader
// makes before reading a page, whole-file or streamed, --obs or --ref:
// the footer's row count is its row groups' (a dropped group would
// otherwise go unnoticed), each group's count is its columns', and every
// column chunk lies inside the file, so a crafted size can make the
// library neither allocate gigabytes nor slice with a negative length.
func verifyParquet(path string, rdr *file.Reader, leaves []int, starts []int64) error {
	md := rdr.MetaData()
	if err := checkChunks(path, rdr, leaves); err != nil {
		return err
	}
	if n := starts[len(starts)-1]; md.NumRows != n {
		return inputError(path, fmt.Sprintf("corrupt Parquet file: the footer declares %d rows, its row groups hold %d", md.NumRows, n), nil)
	}
	size := fileSize(path)
	for g := range rdr.NumRowGroups() {
		rg := md.RowGroup(g)
		for _, leaf := range leaves {
			cc, err := rg.ColumnChunk(leaf)
			if err != nil {
				return inputError(path, fmt.Sprintf("corrupt Parquet file: row group %d", g), err)
			}
			start := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 {
				start = min(start, cc.DictionaryPageOffset())
			}
			n := cc.TotalCompressedSize()
			if start < 0 || n < 0 || (size > 0 && (start > size || n > size-start)) {
				return inputError(path, fmt.Sprintf("corrupt Parquet file: row group %d column %q claims bytes [%d, %d+%d) of a %d-byte file",
					g, md.Schema.Column(leaf).Path(), start, start, n, size), nil)
			}
			if cc.TotalUncompressedSize() < 0 {
				return inputError(path, fmt.Sprintf("corrupt Parquet file: row group %d column %q claims %d bytes uncompressed",
					g, md.Schema.Column(leaf).Path(), cc.TotalUncompressedSize()), nil)
			}
		}
	}
	return nil
}

// batchesEnd is the end of a Parquet file read in batches: io.EOF only
// once every row of the range is read, since a file cut short while it
// is read can end the library's record reader without an error.
func batchesEnd(path string, read, want int64) error {
	if read < want {
		return inputError(path, fmt.Sprintf("corrupt Parquet file: data ends at row %d of %d", read, want), io.ErrUnexpectedEOF)
	}
	return io.EOF
}

// ipcEnd is the end of an Arrow IPC file read in windows: io.EOF only once
// the rows its verified messages declare are all read.
func ipcEnd(path string, read, want int64) error {
	if want > 0 && read != want {
		return inputError(path, fmt.Sprintf("corrupt Arrow IPC file: data ends at row %d of %d", read, want), io.ErrUnexpectedEOF)
	}
	return io.EOF
}

// withoutRuntimeText drops an error that carries a Go runtime panic's
// text (arrow-go recovers some of its own panics into errors, "runtime
// error: slice bounds out of range ..."): the reason already says the
// file is corrupt, and the text would read as a fault of knn.
func withoutRuntimeText(err error) error {
	if err != nil && strings.Contains(err.Error(), "runtime error") {
		return nil
	}
	return err
}
