package pointio_test

import (
	"bufio"
	"fmt"
	"os"

	"github.com/geoknn/geoknn/pointio"
)

func ExampleWriteAtomic() {
	dir, err := os.MkdirTemp("", "example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := dir + "/result.csv"

	// A failed write leaves nothing behind.
	err = pointio.WriteAtomic(path, func(w *bufio.Writer) error {
		w.WriteString("obs_index,ref_index,distance_m\n")
		return fmt.Errorf("engine failed")
	})
	_, statErr := os.Stat(path)
	fmt.Println(err != nil, os.IsNotExist(statErr))
	// Output:
	// true true
}
