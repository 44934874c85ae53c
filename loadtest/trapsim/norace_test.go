//go:build !race

package trapsim

const raceEnabled = false
