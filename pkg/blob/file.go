package blob

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// fileStore keeps each key as a file under dir.
type fileStore struct {
	dir  string
	opts *options
}

func openFile(u *url.URL, o *options) (*fileStore, error) {
	if u.Host != "" && u.Host != "localhost" {
		return nil, fmt.Errorf("file URL names host %q; want file:///absolute/path", u.Host)
	}
	if u.RawQuery != "" {
		return nil, errors.New("file URL takes no parameters")
	}
	dir := filepath.Clean(filepath.FromSlash(u.Path))
	if !filepath.IsAbs(dir) || u.Opaque != "" {
		return nil, fmt.Errorf("file URL path %q is not absolute; want file:///absolute/path", u.Path+u.Opaque)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create folder: %w", err)
	}
	return &fileStore{dir: dir, opts: o}, nil
}

func (s *fileStore) path(key string) string {
	return filepath.Join(s.dir, filepath.FromSlash(key))
}

// put links (same filesystem) or copies src to a temporary name beside the
// key's file, fsyncs it, renames it into place and fsyncs the folder.
func (s *fileStore) put(ctx context.Context, key, src string) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, fmt.Errorf("put blob %s: %w", key, err)
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return 0, fmt.Errorf("put blob %s: %w", key, err)
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("put blob %s: %s is not a regular file", key, src)
	}
	ctx, cancel := context.WithTimeout(ctx, s.opts.deadline(st.Size()))
	defer cancel()
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("put blob %s: %w", key, err)
	}

	dst := s.path(key)
	dir := filepath.Dir(dst)
	if err := s.mkdirAll(dir); err != nil {
		return 0, fmt.Errorf("put blob %s: %w", key, err)
	}
	if cur, err := os.Stat(dst); err == nil && os.SameFile(cur, st) {
		// src is the stored file itself (the segment folder is the blob
		// folder): only make sure it is durable.
		if err := in.Sync(); err != nil {
			return 0, fmt.Errorf("put blob %s: sync: %w", key, err)
		}
		if err := syncDir(dir); err != nil {
			return 0, fmt.Errorf("put blob %s: %w", key, err)
		}
		return st.Size(), nil
	}

	var tag [8]byte
	_, _ = rand.Read(tag[:])
	tmp := filepath.Join(dir, ".blob-tmp-"+hex.EncodeToString(tag[:])+"-"+path.Base(key))
	done := false
	defer func() {
		if !done {
			os.Remove(tmp)
		}
	}()
	if err := link(src, tmp); err == nil {
		// A link shares the source's data, which its writer may not have
		// fsynced; fsync it (one inode, so the open source will do).
		if err := in.Sync(); err != nil {
			return 0, fmt.Errorf("put blob %s: sync: %w", key, err)
		}
	} else if err := copyFile(ctx, tmp, in, st.Size()); err != nil {
		return 0, fmt.Errorf("put blob %s: %w", key, err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return 0, fmt.Errorf("put blob %s: %w", key, err)
	}
	done = true
	if err := syncDir(dir); err != nil {
		return 0, fmt.Errorf("put blob %s: %w", key, err)
	}
	return st.Size(), nil
}

// link is os.Link; tests replace it to take the copy path.
var link = os.Link

// copyChunk bounds the work between two looks at the context. Each chunk is
// one copy_file_range on Linux.
const copyChunk = 64 << 20

func copyFile(ctx context.Context, dst string, in *os.File, size int64) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	for copied := int64(0); copied < size; {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("copy: %w", err)
		}
		n, err := io.CopyN(out, in, min(copyChunk, size-copied))
		copied += n
		if err != nil {
			return fmt.Errorf("copy: %w", err)
		}
	}
	if err := out.Sync(); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	return out.Close()
}

// mkdirAll creates dir and fsyncs the parent of every folder it creates, so
// the new folders survive a crash along with the file put into them.
func (s *fileStore) mkdirAll(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if dir != s.dir && parent != dir {
		if err := s.mkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return syncDir(parent)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync folder %s: %w", dir, err)
	}
	return nil
}

func (s *fileStore) readRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read blob %s: %w", key, err)
	}
	f, err := os.Open(s.path(key))
	if err != nil {
		if isNotExist(err) {
			return nil, fmt.Errorf("read blob %s: %w", key, ErrNotFound)
		}
		return nil, fmt.Errorf("read blob %s: %w", key, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read blob %s: %w", key, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("read blob %s: %w", key, ErrNotFound)
	}
	if off+n > st.Size() {
		return nil, fmt.Errorf("read blob %s at %d+%d: size %d: %w", key, off, n, st.Size(), ErrOutOfRange)
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("read blob %s at %d+%d: %w", key, off, n, err)
	}
	return buf, nil
}

func (s *fileStore) exists(ctx context.Context, key string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, fmt.Errorf("check blob %s: %w", key, err)
	}
	st, err := os.Stat(s.path(key))
	switch {
	case err == nil:
		return st.Mode().IsRegular(), nil
	case isNotExist(err):
		return false, nil
	default:
		return false, fmt.Errorf("check blob %s: %w", key, err)
	}
}

// isNotExist also counts a path through a file (ENOTDIR) as missing.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// list walks the folder; names starting with "." (Put's temporary files)
// are no objects.
func (s *fileStore) list(ctx context.Context, prefix string) ([]Object, error) {
	var out []Object
	err := filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && p != s.dir {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(s.dir, p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, Object{Key: key, Size: info.Size()})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list blobs under %q: %w", prefix, err)
	}
	slices.SortFunc(out, func(a, b Object) int { return strings.Compare(a.Key, b.Key) })
	return out, nil
}

func (s *fileStore) close() error { return nil }
