package mpi

// BcastStrings sends root's strings (ids, names) to every process; the
// others' ss is ignored.
func (c Comm) BcastStrings(ss []string, root int) ([]string, error) {
	me, err := c.Rank()
	if err != nil {
		return nil, err
	}
	lens, joined := encodeStrings(ss, me == root)
	head := []int64{int64(len(lens)), int64(len(joined))}
	if err := c.Bcast(Bytes(head), root); err != nil {
		return nil, err
	}
	if me != root {
		lens, joined = make([]uint32, head[0]), make([]byte, head[1])
	}
	if err := c.Bcast(Bytes(lens), root); err != nil {
		return nil, err
	}
	if err := c.Bcast(joined, root); err != nil {
		return nil, err
	}
	return decodeStrings(lens, joined), nil
}

// ScatterStrings sends each process its range (counts, as Shares gives) of
// root's strings.
func (c Comm) ScatterStrings(ss []string, counts []int, root int) ([]string, error) {
	me, err := c.Rank()
	if err != nil {
		return nil, err
	}
	lens, joined := encodeStrings(ss, me == root)
	// Every process passes the same counts to Scatterv: root's byte count
	// a rank first.
	byteCounts := make([]int64, len(counts))
	if me == root {
		at := 0
		for r, k := range counts {
			for _, n := range lens[at : at+k] {
				byteCounts[r] += int64(n)
			}
			at += k
		}
	}
	if err := c.Bcast(Bytes(byteCounts), root); err != nil {
		return nil, err
	}
	lenBytes, strBytes := make([]int, len(counts)), make([]int, len(counts))
	for r, k := range counts {
		lenBytes[r], strBytes[r] = 4*k, int(byteCounts[r])
	}
	myLens, myBytes := make([]uint32, counts[me]), make([]byte, strBytes[me])
	if err := c.Scatterv(Bytes(lens), lenBytes, Bytes(myLens), root); err != nil {
		return nil, err
	}
	if err := c.Scatterv(joined, strBytes, myBytes, root); err != nil {
		return nil, err
	}
	return decodeStrings(myLens, myBytes), nil
}

// encodeStrings is ss as lengths and concatenated bytes (nothing unless
// this process sends).
func encodeStrings(ss []string, sends bool) ([]uint32, []byte) {
	if !sends {
		return nil, nil
	}
	lens, total := make([]uint32, len(ss)), 0
	for i, s := range ss {
		lens[i] = uint32(len(s))
		total += len(s)
	}
	b := make([]byte, 0, total)
	for _, s := range ss {
		b = append(b, s...)
	}
	return lens, b
}

// decodeStrings splits joined by lens.
func decodeStrings(lens []uint32, joined []byte) []string {
	all := string(joined)
	out := make([]string, len(lens))
	at := 0
	for i, n := range lens {
		out[i] = all[at : at+int(n)]
		at += int(n)
	}
	return out
}
