package numpyio

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
)

// finishMember reads an .npz member to its end, so that archive/zip
// compares its CRC-32 with the directory's (it does so only at the end of
// the data, which an array reader stops short of): a flipped data byte
// is refused as NumPy refuses it, not read as a different point.
func finishMember(rc io.Reader, what string) error {
	_, err := io.Copy(io.Discard, rc)
	if errors.Is(err, zip.ErrChecksum) {
		return npyError(what, fmt.Errorf("bad CRC-32: the member's data is not what the archive recorded"))
	}
	if err != nil {
		return npyError(what, err)
	}
	return nil
}
