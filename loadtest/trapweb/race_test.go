//go:build race

package trapweb

const raceEnabled = true
