package pointio

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// IsStdout reports whether path names the process's standard output: "-"
// or one of its file names (/dev/stdout, /dev/fd/1, /proc/self/fd/1).
// Such an output is written to descriptor 1 itself, as coreutils' tee and
// dd write "/dev/stdout": opening the name again would replace the file
// behind it (after ">>" or "{ ...; } >", losing its earlier content)
// where the descriptor appends or continues at its position.
func IsStdout(path string) bool {
	switch filepath.Clean(path) {
	case "-", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1":
		return true
	}
	return false
}

// stdoutWriter is the writer standard output's output goes to: the
// command's, or os.Stdout when it gave none.
func stdoutWriter(stdout io.Writer) io.Writer {
	if stdout == nil {
		return os.Stdout
	}
	return stdout
}

// checkStdout refuses standard output as an output when the file behind
// it is one of inputs (or standard input's): "knn run --obs big.csv
// --out - >> big.csv" would read its own answers back, growing the file
// without end.
func checkStdout(path string, inputs []string) error {
	fi, err := os.Stdout.Stat()
	if err != nil || !(fi.Mode().IsRegular() || fi.Mode()&fs.ModeNamedPipe != 0) {
		return nil
	}
	if in, ok := inputOf(fi, inputs); ok {
		return fmt.Errorf("output %s: standard output is the input %s: refusing to write into it", path, in)
	}
	return nil
}
