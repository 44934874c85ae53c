//go:build race

package recrawl

const raceEnabled = true
