package ranks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/geoknn/geoknn/mpi"
)

// WriteOwn writes the rank's answers to its own file, path (Path), through
// write, once every rank has answered (a rank that failed has ended the
// job before: no file is begun); if any rank fails to write, every rank
// removes its file, so a failed job leaves none. It is for ranks on hosts
// that share no filesystem, where Output cannot be.
func WriteOwn(world mpi.Comm, path string, write func() error) error {
	if _, err := world.MaxFloat64(0); err != nil {
		return err
	}
	err := write()
	failed := 0.0
	if err != nil {
		failed = 1
	}
	anyFailed, rerr := world.MaxFloat64(failed)
	if rerr != nil {
		return rerr
	}
	if anyFailed > 0 {
		if err == nil {
			os.Remove(path)
			return ErrAnotherRankAnswers
		}
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Path is path with .rankN before its extension: rank's own file.
func Path(path string, rank int) string {
	ext := filepath.Ext(path)
	return fmt.Sprintf("%s.rank%d%s", strings.TrimSuffix(path, ext), rank, ext)
}
