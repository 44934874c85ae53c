package pattern

import "testing"

func TestDateStep(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"http://a/cal/2031-04-30.html", "http://a/cal/2031-05-01.html", true}, // over a month's edge
		{"http://a/cal/2030-12-31/", "http://a/cal/2031-01-01/", true},         // and a year's
		{"http://a/cal/2030-12-15", "http://a/cal/2031-01-15", true},           // a month on
		{"http://a/cal/2030-11-15", "http://a/cal/2031-01-15", true},           // two
		{"http://a/cal/2029-04-11", "http://a/cal/2031-04-11", true},           // two years
		{"http://a/d?day=20301231", "http://a/d?day=20310101", true},           // compact
		{"http://a/m/2030/12/x", "http://a/m/2031/01/x", true},                 // months by path
		{"http://a/e/31.12.2030", "http://a/e/01.01.2031", true},               // day first
		{"http://a/cal/2031-04-08.html", "http://a/cal/2031-04-22.html", true}, // a month's grid
		{"http://a/cal/2031-04-30.html", "http://a/cal/2031-06-03.html", false},
		{"http://a/cal/2030-12-15", "http://a/cal/2031-01-16", false}, // a month and a day
		{"http://a/cal/2026-01-15", "http://a/cal/2031-01-15", false}, // five years
		{"http://a/cal/2031-04-30.html", "http://a/cal/2031-04-30.html", false},
		{"http://a/cal/2031-04-30.html", "http://a/log/2031-05-01.html", false}, // another path
		{"http://a/item/1234/5678", "http://a/item/1235/0101", false},           // no date
		{"http://a/cal/2031-02-30", "http://a/cal/2031-03-01", false},           // no such day
		{"http://a/v/2030-12.html", "http://a/v/2031-01.html", true},
		{"http://a/v/2030-12.html", "http://a/v/2031-01-01.html", false}, // a month and a day
	} {
		if got := dateStep(tc.a, tc.b); got != tc.want {
			t.Errorf("dateStep(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
		if got := dateStep(tc.b, tc.a); got != tc.want {
			t.Errorf("dateStep(%s, %s) = %v, want %v (turned round)", tc.b, tc.a, got, tc.want)
		}
	}
}

// FuzzDateStep: any pair is answered, the same both ways round.
func FuzzDateStep(f *testing.F) {
	f.Add("http://a/cal/2031-04-30.html", "http://a/cal/2031-05-01.html")
	f.Add("http://a/e/31.12.2030", "http://a/e/01.01.2031")
	f.Add("http://a/d?day=20301231", "http://a/d?day=203101")
	f.Fuzz(func(t *testing.T, a, b string) {
		if dateStep(a, b) != dateStep(b, a) {
			t.Errorf("dateStep(%q, %q) depends on the order", a, b)
		}
		if dateStep(a, a) {
			t.Errorf("dateStep(%q, itself)", a)
		}
	})
}
