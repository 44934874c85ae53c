package urlnorm

import (
	"slices"
	"strings"
)

// normalizeQuery normalizes the escapes of each parameter, drops empty and
// stripped parameters, and sorts the rest by name. The sort is stable so
// "a=2&a=1" keeps its order: for repeated names the order can matter to the
// server.
func normalizeQuery(raw string, f paramFilter) string {
	if raw == "" {
		return ""
	}
	type param struct{ name, pair string }
	params := make([]param, 0, strings.Count(raw, "&")+1)
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		part = normalizeEscapes(part, queryComponent)
		name, _, _ := strings.Cut(part, "=")
		if f.strip(name) {
			continue
		}
		params = append(params, param{name: name, pair: part})
	}
	if len(params) == 0 {
		return ""
	}
	slices.SortStableFunc(params, func(a, b param) int { return strings.Compare(a.name, b.name) })
	var b strings.Builder
	b.Grow(len(raw))
	for i, p := range params {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.pair)
	}
	return b.String()
}

// normalizePath normalizes the escapes of an absolute path and removes
// stripped ";name=value" path parameters (";jsessionid=..." in Java servlet
// URLs).
func normalizePath(p string, f paramFilter) string {
	p = normalizeEscapes(p, pathComponent)
	if !strings.Contains(p, ";") {
		return p
	}
	segs := strings.Split(p, "/")
	changed, dots := false, false
	for i, seg := range segs {
		if !strings.Contains(seg, ";") {
			continue
		}
		if s, ok := stripPathParams(seg, f); ok {
			segs[i] = s
			changed = true
			dots = dots || s == "." || s == ".."
		}
	}
	if !changed {
		return p
	}
	if dots {
		// Stripping "..;jsessionid=x" leaves a dot segment the parser never
		// saw; resolve it here or a second Normalize would change the URL.
		return "/" + strings.Join(removeDotSegments(segs[1:]), "/")
	}
	return strings.Join(segs, "/")
}

// stripPathParams removes stripped parameters from one path segment and
// reports whether it removed any.
func stripPathParams(seg string, f paramFilter) (string, bool) {
	parts := strings.Split(seg, ";")
	kept := parts[:1]
	for _, param := range parts[1:] {
		name, _, _ := strings.Cut(param, "=")
		if f.strip(name) {
			continue
		}
		kept = append(kept, param)
	}
	if len(kept) == len(parts) {
		return seg, false
	}
	return strings.Join(kept, ";"), true
}

// removeDotSegments resolves "." and ".." segments the way the WHATWG path
// state does: ".." never climbs above the root, and a trailing dot segment
// leaves a trailing slash.
func removeDotSegments(segs []string) []string {
	out := make([]string, 0, len(segs))
	for i, seg := range segs {
		last := i == len(segs)-1
		switch seg {
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		case ".":
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, seg)
		}
	}
	return out
}
