//go:build !unix

package fetch

func openFilesLimit() uint64 { return 0 }
