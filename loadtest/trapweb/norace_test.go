//go:build !race

package trapweb

const raceEnabled = false
