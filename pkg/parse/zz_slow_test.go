package parse

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestScratchSlow(t *testing.T) {
	for _, n := range []int{1024, 2048, 4096, 8192, 16384} {
		for name, ref := range map[string]string{
			"user":  "http://" + strings.Repeat("a", n) + "@x/",
			"user2": "//" + strings.Repeat("a", n) + "@x/",
			"userpct":  "http://" + strings.Repeat("é", n/2) + "@x/",
		} {
			page := `<a href="` + ref + `">x</a>`
			st := time.Now()
			Parse([]byte(page), "text/html", pageURL, nil, Options{})
			fmt.Printf("%-9s n=%-7d %v\n", name, n, time.Since(st))
		}
	}
}
