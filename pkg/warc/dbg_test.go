package warc

import (
	"bytes"
	"fmt"
	"slices"
	"testing"
)

func TestDbg(t *testing.T) {
	for range 150 {
	_, data, _ := writeSample(t)
	full := readAll(bytes.NewReader(data))
	for i := range data {
		for _, mask := range []byte{0x01, 0x80, 0xff} {
	bad := slices.Clone(data)
	bad[i] ^= mask
	res := readAll(bytes.NewReader(bad))
	for j, rec := range res.recs {
		if !sameRecord(rec, full.recs[j]) {
			fmt.Println(full.offsets, len(data), i, mask, res.offsets, res.err)
			fmt.Printf("%v\n%v\n%q\n%q\n", rec.Header.fields, full.recs[j].Header.fields, rec.Block, full.recs[j].Block)
			return
		}
	}
	}}
	}
}
