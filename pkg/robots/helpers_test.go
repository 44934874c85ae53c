package robots

import (
	"strings"
	"testing"
	"time"
)

// testAgent is the crawler the table tests play unless a case names another.
const testAgent = "FooBot"

// testNow is a fixed clock for entry tests; its location is not UTC on
// purpose, so codec tests see that only the instant is kept.
var testNow = time.Date(2025, 3, 14, 15, 9, 26, 535897932, time.FixedZone("CET", 3600))

// star builds a robots.txt with one "User-agent: *" group holding lines.
func star(lines ...string) string {
	return "User-agent: *\n" + strings.Join(lines, "\n") + "\n"
}

// pathCase is one robots.txt, one crawler, and the request targets the
// crawler may and may not fetch.
type pathCase struct {
	name  string
	body  string
	agent string // testAgent when empty
	allow []string
	deny  []string
}

// runPathCases checks every case twice: on the parsed Group, and on an Entry
// that went through MarshalBinary and UnmarshalBinary, so each table also
// checks that the cached form decides exactly like the parsed one.
func runPathCases(t *testing.T, cases []pathCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			agent := tc.agent
			if agent == "" {
				agent = testAgent
			}
			g := Parse([]byte(tc.body)).Group(agent)
			cached := roundTrip(t, Evaluate(Policy{Agent: agent}, 200, []byte(tc.body), nil, testNow, nil))
			check := func(path string, want bool) {
				t.Helper()
				if got := g.Allowed(path); got != want {
					t.Errorf("Group(%q).Allowed(%q) = %v, want %v", agent, path, got, want)
				}
				if got := cached.Allowed(path); got != want {
					t.Errorf("cached Entry.Allowed(%q) = %v, want %v", path, got, want)
				}
			}
			for _, p := range tc.allow {
				check(p, true)
			}
			for _, p := range tc.deny {
				check(p, false)
			}
		})
	}
}

// roundTrip returns e after MarshalBinary and UnmarshalBinary.
func roundTrip(t testing.TB, e *Entry) *Entry {
	t.Helper()
	b, err := e.MarshalBinary()
	if err != nil {
		t.Fatalf("MarshalBinary: %v", err)
	}
	var out Entry
	if err := out.UnmarshalBinary(b); err != nil {
		t.Fatalf("UnmarshalBinary(MarshalBinary()): %v", err)
	}
	return &out
}
