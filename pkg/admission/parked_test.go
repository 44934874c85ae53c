package admission

import (
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"
	"time"
	"unsafe"
)

// neverHeld are the fields of a Candidate that a page held by its budgets
// never has: it is new (no revisit, history, validators or fetch) and was
// admitted by the rules (no reason); or that it need not keep: a replayed
// record matters only for a URL the store has (Recount), never parked;
// MayBeHeld and a rewrite's target (Row.RewriteOf) are set on admission only.
var neverHeld = map[string]bool{
	"Revisit": true, "Due": true, "Replayed": true, "MayBeHeld": true, "Row.RewriteOf": true,
	"Row.Recrawl": true, "Row.FetchedAt": true, "Row.Status": true, "Row.ETag": true,
	"Row.LastModified": true, "Row.Attempts": true, "Row.Reason": true, "Row.SitemapLastMod": true,
}

// fill sets every field of v that neverHeld does not list to a random
// non-zero value, integers within 32 bits.
func fill(t *testing.T, rng *rand.Rand, v reflect.Value, path string) {
	if neverHeld[path] {
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Unix(0, rng.Int64N(1<<62)+1)))
			return
		}
		for i := range v.NumField() {
			name := v.Type().Field(i).Name
			if path != "" {
				name = path + "." + name
			}
			fill(t, rng, v.Field(i), name)
		}
	case reflect.String:
		v.SetString("s" + strconv.FormatUint(rng.Uint64(), 36))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := min(v.Type().Bits(), 32)
		v.SetInt(rng.Int64N(1<<(bits-1)-1) + 1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(rng.Uint64N(1<<min(v.Type().Bits(), 32)-1) + 1)
	default:
		t.Fatalf("%s: a %s, which fill does not know: carry it in Parked (or list it in neverHeld) and teach fill", path, v.Kind())
	}
}

// TestParkedRoundTrip checks that a candidate held by its budgets comes
// back as it went in, whatever its fields hold, and that what a held URL
// keeps stays a fraction of a Candidate.
func TestParkedRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var c Candidate
		fill(t, rng, reflect.ValueOf(&c).Elem(), "")
		// The pattern candidate is described from the row's URL and parent.
		c.Pat.URL, c.Pat.Parent = c.Row.URL, c.Row.Parent
		got := park(c).candidate(c.Pat)
		if !reflect.DeepEqual(got, c) {
			t.Fatalf("parked and released:\n got %+v\nwant %+v", got, c)
		}
	}
	var c Candidate
	c.Row.URL, c.Pat.URL = "https://example.org/a", "https://example.org/a"
	if got := park(c).candidate(c.Pat); !reflect.DeepEqual(got, c) {
		t.Fatalf("a zero candidate parked and released: got %+v", got)
	}
	if p, whole := unsafe.Sizeof(Parked{}), unsafe.Sizeof(Candidate{}); p > whole/4 {
		t.Errorf("Parked is %d bytes, a Candidate %d: a held URL should keep a fraction", p, whole)
	}
}
