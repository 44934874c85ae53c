//go:build race

package trapsim

const raceEnabled = true
