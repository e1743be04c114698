package main

import (
	"errors"
	"flag"

	"github.com/geoknn/geoknn"
)

// engineFlags are the flags that choose and size the engine, the same on
// every command that runs queries (run, simulate, plot): each registers
// them through register and reads them through options.
type engineFlags struct {
	engine, algo, memory string
	gpus, batch          int
}

// register defines the engine flags on fs.
func (e *engineFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&e.engine, "engine", "auto", "auto (GPU if usable, else CPU), cpu or gpu")
	fs.StringVar(&e.algo, "algo", "grid", "grid (exact, cell index; a k-d tree for references no grid suits, brute force when cheaper), brute (exact) or seed (a float32 brute-force baseline, not exact, GPU only)")
	fs.StringVar(&e.memory, "memory", "device", "GPU memory for observations and answers: device (async copies) or managed")
	fs.IntVar(&e.gpus, "gpus", 0, "number of GPUs to use (0 = all)")
	fs.IntVar(&e.batch, "batch-size", 0, "observations per job (0 = from free GPU memory)")
}

// options parses the engine flags into the searcher's options.
func (e *engineFlags) options() (geoknn.Options, error) {
	if e.gpus < 0 || e.batch < 0 {
		return geoknn.Options{}, errors.New("--gpus and --batch-size must be >= 0")
	}
	eng, err := geoknn.ParseEngine(e.engine)
	if err != nil {
		return geoknn.Options{}, err
	}
	algo, err := geoknn.ParseAlgorithm(e.algo)
	if err != nil {
		return geoknn.Options{}, err
	}
	mem, err := geoknn.ParseMemoryMode(e.memory)
	if err != nil {
		return geoknn.Options{}, err
	}
	return geoknn.Options{Engine: eng, Algorithm: algo, GPUs: e.gpus, BatchSize: e.batch, Memory: mem}, nil
}
