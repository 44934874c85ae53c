package parse

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestScratchSlow(t *testing.T) {
	for _, p := range []string{"http://(@)", "https://a(%4a=@)", "http://a:(1@ )", "http:(/ )", "(\\a//)", "http:(1[\\ )", "?([ /\t)", "//(@%41 )", "#(] )", "http:(\\a%41 )", "http://a:(/1 )"} {
		pre, pat, _ := strings.Cut(p, "(")
		pat = strings.TrimSuffix(pat, ")")
		for _, n := range []int{2048, 8192} {
			ref := pre + strings.Repeat(pat, n/len(pat))
			page := []byte(`<a href="` + ref + `">x</a>`)
			best := time.Hour
			for range 5 {
				st := time.Now()
				Parse(page, "text/html; charset=utf-8", pageURL, nil, Options{})
				best = min(best, time.Since(st))
			}
			fmt.Printf("%-20q n=%-6d %v  %.2fus/B\n", p, n, best, float64(best.Nanoseconds())/1000/float64(n))
		}
	}
	// many max-size userinfo refs
	ref := "http://" + strings.Repeat("@", 256) + "x/"
	page := []byte(strings.Repeat(`<a href="`+ref+`">x</a>`, 1000))
	st := time.Now()
	d, _ := Parse(page, "text/html; charset=utf-8", pageURL, nil, Options{})
	fmt.Println(len(page), time.Since(st), len(d.Links), d.LinksInvalid)
}
