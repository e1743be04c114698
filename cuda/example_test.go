package cuda_test

import (
	"errors"
	"fmt"
	"log"

	"github.com/geoknn/geoknn/cuda"
)

// Load the driver, falling back to the CPU when the machine has none.
func ExampleLoad() {
	drv, err := cuda.Load()
	if errors.Is(err, cuda.ErrNoDriver) {
		fmt.Println("no GPU; using the CPU path")
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	n, err := drv.DeviceCount()
	if err != nil {
		log.Fatal(err)
	}
	for i := range n {
		dev, err := drv.Device(i)
		if err != nil {
			log.Fatal(err)
		}
		name, _ := drv.DeviceName(dev)
		mem, _ := drv.DeviceTotalMem(dev)
		fmt.Printf("GPU %d: %s, %d MiB\n", i, name, mem>>20)
	}
}
