//go:build !race

package recrawl

const raceEnabled = false
