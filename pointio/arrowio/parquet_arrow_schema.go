package arrowio

import (
	"encoding/base64"
	"fmt"

	"github.com/apache/arrow-go/v18/parquet/metadata"
)

// arrowSchemaKey is the key-value metadata entry in which Arrow writers
// keep a Parquet file's Arrow schema, an IPC stream in base64.
const arrowSchemaKey = "ARROW:schema"

// checkArrowSchema refuses a Parquet file whose ARROW:schema entry is
// not a sound IPC stream. pqarrow decodes that entry with arrow-go's IPC
// reader, which trusts the message's lengths: a crafted one makes it
// allocate without bound, ending the process out of memory where no
// recover reaches. The entry is decoded as pqarrow decodes it and its
// first message, the only one pqarrow reads, checked as an IPC file's
// messages are (streamMessage).
func checkArrowSchema(kv metadata.KeyValueMetadata) error {
	v := kv.FindValue(arrowSchemaKey)
	if v == nil {
		return nil
	}
	b, err := decodeArrowSchema(*v)
	if err != nil {
		return nil // pqarrow refuses it with the same error, safely
	}
	if _, _, err := streamMessage(b, 0); err != nil {
		return fmt.Errorf("its %s metadata is corrupt: %w", arrowSchemaKey, err)
	}
	return nil
}

// decodeArrowSchema decodes an ARROW:schema value as pqarrow does:
// padded base64 when its length allows, else unpadded.
func decodeArrowSchema(s string) ([]byte, error) {
	var b []byte
	var err error
	if len(s)%4 == 0 {
		b, err = base64.StdEncoding.DecodeString(s)
	}
	if len(b) == 0 || err != nil {
		b, err = base64.RawStdEncoding.DecodeString(s)
	}
	return b, err
}
