package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/geoknn/geoknn"
)

func cmdDevices(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("devices", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: knn devices\n\nLists the CUDA GPUs of this host: name, multiprocessors, memory,\ncompute capability and the driver's CUDA version.")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsageShown
	}
	devs, version, err := geoknn.ListDevices()
	if errors.Is(err, geoknn.ErrNoDriver) {
		fmt.Fprintln(stdout, "no CUDA driver on this host: knn runs on the CPU")
		return nil
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "CUDA driver %d.%d, %d GPU(s)\n", version/1000, version%1000/10, len(devs))
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tname\tSMs\tclock\tmemory\tcompute\tFP32 peak")
	for _, d := range devs {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d MHz\t%.1f GiB\t%d.%d\t%.1f TFLOP/s\n", d.Ordinal, d.Name, d.Multiprocessors,
			d.ClockMHz, float64(d.TotalMemory)/(1<<30), d.ComputeCapability[0], d.ComputeCapability[1], d.FP32PeakFLOPS()/1e12)
	}
	return tw.Flush()
}
