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

// LoadTokens returns the API's bearer tokens, for Config.Tokens, and the
// names the token file gives some of them, for Config.TokenNames.
//
// With file set, the tokens are the file's lines, trimmed, skipping blank lines and
// lines starting with '#'; CRAWLER_API_TOKENS is then ignored, so a token file
// mounted from a secret always says exactly who may call. A line "NAME: TOKEN"
// names its token: the audit log then says who acted by that name rather than by
// a hash of the token. A file without any token is an error rather than an open
// API. Without a file, the tokens are CRAWLER_API_TOKENS split at commas, without
// names; unset or empty, there are none and the API needs no token (the embedded
// crawler on loopback).
//
// A token may not contain white space: in a file that is almost always a comment
// written after the token on the same line.
func LoadTokens(file string) (tokens []string, names map[string]string, err error) {
	if file == "" {
		for i, t := range strings.Split(os.Getenv(TokensEnv), ",") {
			t = strings.TrimSpace(t)
			if t == "" {
				continue
			}
			if strings.IndexFunc(t, unicode.IsSpace) >= 0 {
				return nil, nil, fmt.Errorf("%s: token %d contains white space", TokensEnv, i+1)
			}
			tokens = append(tokens, t)
		}
		return tokens, nil, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, fmt.Errorf("read API token file: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		t := strings.TrimSpace(sc.Text())
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		// Cut the line as written: "ops: " is a name without its token.
		name, tok, named := strings.Cut(sc.Text()+" ", ": ")
		if named {
			name, t = strings.TrimSpace(name), strings.TrimSpace(tok)
			if name == "" || t == "" {
				return nil, nil, fmt.Errorf("API token file %s, line %d: want TOKEN or NAME: TOKEN", file, n)
			}
		}
		if strings.IndexFunc(t, unicode.IsSpace) >= 0 {
			return nil, nil, fmt.Errorf("API token file %s, line %d: a token may not contain white space (comments go on lines of their own)", file, n)
		}
		if named {
			if names == nil {
				names = map[string]string{}
			}
			names[t] = name
		}
		tokens = append(tokens, t)
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("read API token file %s: %w", file, err)
	}
	if len(tokens) == 0 {
		return nil, nil, fmt.Errorf("API token file %s holds no token", file)
	}
	return tokens, names, nil
}
