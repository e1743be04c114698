package main

import (
	"flag"

	"github.com/geoknn/geoknn/pointio"
)

// checkOutputs is every command's guard of the files it will write, run
// before any work: an output flag (of names) given an empty name is a
// usage error, and every output (pointio.CheckOutputs) must be a place
// that can take it, none an input, a read-only file or another output.
// The commands then write through pointio.Write, which streams into
// devices and pipes and replaces files only whole, leaving nothing on an
// error or a signal.
func checkOutputs(fs *flag.FlagSet, names []string, outputs, inputs []string) error {
	for _, name := range names {
		fl := fs.Lookup(name)
		given := false
		fs.Visit(func(v *flag.Flag) { given = given || v == fl })
		if given && fl.Value.String() == "" {
			return usagef("%s: --%s '': an empty file name (- is standard output where a command takes it)", fs.Name(), name)
		}
	}
	return pointio.CheckOutputs(outputs, inputs)
}

// describeOut names an output as the "wrote" lines do: "-" is standard
// output.
func describeOut(path string) string {
	if path == "-" {
		return "standard output"
	}
	return path
}
