package api

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strings"
	"unicode"
)

// TokensEnv is the environment variable LoadTokens reads when no token file is
// given: comma-separated bearer tokens.
const TokensEnv = "CRAWLER_API_TOKENS"

// LoadTokens returns the API's bearer tokens, for Config.Tokens.
//
// With file set, the tokens are the file's lines, trimmed, skipping blank lines and
// lines starting with '#'; CRAWLER_API_TOKENS is then ignored, so a token file
// mounted from a secret always says exactly who may call. A file without any token
// is an error rather than an open API. Without a file, the tokens are
// CRAWLER_API_TOKENS split at commas; unset or empty, there are none and the API
// needs no token (the embedded crawler on loopback).
//
// A token may not contain white space: in a file that is almost always a comment
// written after the token on the same line.
func LoadTokens(file string) ([]string, error) {
	if file == "" {
		var tokens []string
		for i, t := range strings.Split(os.Getenv(TokensEnv), ",") {
			t = strings.TrimSpace(t)
			if t == "" {
				continue
			}
			if strings.IndexFunc(t, unicode.IsSpace) >= 0 {
				return nil, fmt.Errorf("%s: token %d contains white space", TokensEnv, i+1)
			}
			tokens = append(tokens, t)
		}
		return tokens, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read API token file: %w", err)
	}
	var tokens []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if strings.IndexFunc(t, unicode.IsSpace) >= 0 {
			return nil, fmt.Errorf("API token file %s, line %d: a token may not contain white space (comments go on lines of their own)", file, n)
		}
		tokens = append(tokens, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read API token file %s: %w", file, err)
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("API token file %s holds no token", file)
	}
	return tokens, nil
}
