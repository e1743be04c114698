package serve

import "sort"

func sortSlice(idx []int, less func(a, b int) bool) {
	sort.Slice(idx, func(i, j int) bool { return less(idx[i], idx[j]) })
}
