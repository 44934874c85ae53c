package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// s3Store keeps each key as the object prefix+key in one bucket.
type s3Store struct {
	client *s3.Client
	bucket string
	prefix string // "" or ending in "/"
	opts   *options
}

var s3Params = map[string]bool{"endpoint": true, "region": true, "path_style": true, "access_key": true, "secret_key": true}

func openS3(ctx context.Context, u *url.URL, o *options) (*s3Store, error) {
	if u.Host == "" {
		return nil, errors.New("s3 URL names no bucket; want s3://bucket/prefix?endpoint=URL")
	}
	if u.User != nil {
		return nil, errors.New("s3 URL carries user information; use access_key and secret_key parameters or the AWS environment")
	}
	q := u.Query()
	for name := range q {
		if !s3Params[name] {
			return nil, fmt.Errorf("unknown s3 URL parameter %q", name)
		}
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix != "" {
		if err := ValidateKey(prefix); err != nil {
			return nil, fmt.Errorf("s3 URL prefix: %w", err)
		}
		prefix += "/"
	}
	endpoint := q.Get("endpoint")
	if endpoint != "" {
		eu, err := url.Parse(endpoint)
		if err != nil || (eu.Scheme != "http" && eu.Scheme != "https") || eu.Host == "" {
			return nil, fmt.Errorf("s3 endpoint %q is not an http(s) URL", endpoint)
		}
	}
	pathStyle := endpoint != ""
	if v := q.Get("path_style"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("s3 URL parameter path_style=%q is not a boolean", v)
		}
		pathStyle = b
	}

	// Each attempt waits at most timeout for response headers; the call's
	// context bounds the whole, retries included. The SDK's buildable client,
	// not a plain http.Client, keeps AWS_CA_BUNDLE working.
	httpClient := awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = min(o.timeout, 10*time.Second) }).
		WithTransportOptions(func(t *http.Transport) {
			t.ResponseHeaderTimeout = o.timeout
			t.MaxIdleConnsPerHost = max(o.concurrency, 8)
		})
	loadOpts := []func(*config.LoadOptions) error{
		config.WithHTTPClient(httpClient),
		config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts = o.maxAttempts
				so.MaxBackoff = 5 * time.Second
			})
		}),
	}
	if r := q.Get("region"); r != "" {
		loadOpts = append(loadOpts, config.WithRegion(r))
	}
	ak, sk := q.Get("access_key"), q.Get("secret_key")
	switch {
	case ak != "" && sk != "":
		loadOpts = append(loadOpts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(ak, sk, "")))
	case ak != "" || sk != "":
		return nil, errors.New("s3 URL has only one of access_key and secret_key")
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	client := s3.NewFromConfig(cfg, func(so *s3.Options) {
		if endpoint != "" {
			so.BaseEndpoint = aws.String(endpoint)
		}
		so.UsePathStyle = pathStyle
		// Reads are byte ranges, which carry no object checksum to check;
		// validating "when supported" would only log that for every read.
		so.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	s := &s3Store{client: client, bucket: u.Host, prefix: prefix, opts: o}

	cctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if _, err := client.HeadBucket(cctx, &s3.HeadBucketInput{Bucket: &s.bucket}); err != nil {
		return nil, fmt.Errorf("check bucket %s: %w", s.bucket, err)
	}
	return s, nil
}

func (s *s3Store) object(key string) *string { return aws.String(s.prefix + key) }

func (s *s3Store) put(ctx context.Context, key, src string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("put blob %s: %w", key, err)
	}
	f, err := os.Open(src)
	if err != nil {
		return 0, fmt.Errorf("put blob %s: %w", key, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("put blob %s: %w", key, err)
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("put blob %s: %s is not a regular file", key, src)
	}
	size := st.Size()
	if size <= s.opts.partSize {
		err = s.putObject(ctx, key, f, size)
	} else {
		err = s.putMultipart(ctx, key, f, size)
	}
	if err != nil {
		return 0, fmt.Errorf("put blob %s to bucket %s: %w", key, s.bucket, err)
	}
	return size, nil
}

func (s *s3Store) putObject(ctx context.Context, key string, f *os.File, size int64) error {
	ctx, cancel := context.WithTimeout(ctx, s.opts.deadline(size))
	defer cancel()
	_, err := s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        &s.bucket,
		Key:           s.object(key),
		Body:          io.NewSectionReader(f, 0, size), // seekable: the SDK rewinds it to retry
		ContentLength: aws.Int64(size),
	})
	return err
}

// putMultipart uploads f in parts, opts.concurrency at a time, each part
// under its own deadline, and aborts the upload if any part fails.
func (s *s3Store) putMultipart(ctx context.Context, key string, f *os.File, size int64) (err error) {
	partSize := max(s.opts.partSize, (size+9999)/10000) // S3 allows 10,000 parts
	nparts := int((size + partSize - 1) / partSize)

	// Created uploads must be aborted if anything fails, which takes their
	// ID: a caller's cancel must not cut the answer off after the server
	// acted on the request. The timeout still bounds it.
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.timeout)
	created, err := s.client.CreateMultipartUpload(cctx, &s3.CreateMultipartUploadInput{
		Bucket:            &s.bucket,
		Key:               s.object(key),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32,
	})
	cancel()
	if err != nil {
		return fmt.Errorf("create multipart upload: %w", err)
	}
	defer func() {
		if err == nil {
			return
		}
		if aerr := s.abort(ctx, key, created.UploadId); aerr != nil {
			err = fmt.Errorf("%w (abort multipart upload: %v)", err, aerr)
		}
	}()

	if err := ctx.Err(); err != nil {
		return err
	}

	pctx, stop := context.WithCancel(ctx)
	defer stop()
	parts := make([]types.CompletedPart, nparts)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		next     = make(chan int)
	)
	for range min(s.opts.concurrency, nparts) {
		wg.Go(func() {
			for i := range next {
				off := int64(i) * partSize
				n := min(partSize, size-off)
				part, err := s.uploadPart(pctx, key, created.UploadId, int32(i+1), io.NewSectionReader(f, off, n), n)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("upload part %d of %d: %w", i+1, nparts, err)
					}
					mu.Unlock()
					stop()
					continue
				}
				parts[i] = part
			}
		})
	}
feed:
	for i := range nparts {
		select {
		case next <- i:
		case <-pctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if err := pctx.Err(); err != nil {
		return err
	}

	cctx, cancel = context.WithTimeout(ctx, s.opts.timeout)
	defer cancel()
	_, err = s.client.CompleteMultipartUpload(cctx, &s3.CompleteMultipartUploadInput{
		Bucket:          &s.bucket,
		Key:             s.object(key),
		UploadId:        created.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
	})
	if err != nil {
		return fmt.Errorf("complete multipart upload: %w", err)
	}
	return nil
}

// abort aborts a multipart upload, even when ctx is done, so its parts do
// not linger. A part still being written when the abort arrives can outlive
// it (S3 documents this for its own service, and servers over a filesystem
// behave alike), so abort checks and aborts again.
func (s *s3Store) abort(ctx context.Context, key string, uploadID *string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opts.timeout)
	defer cancel()
	for attempt := 1; ; attempt++ {
		_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &s.bucket, Key: s.object(key), UploadId: uploadID})
		if err != nil && apiCode(err) != "NoSuchUpload" {
			return err
		}
		_, err = s.client.ListParts(ctx, &s3.ListPartsInput{Bucket: &s.bucket, Key: s.object(key), UploadId: uploadID, MaxParts: aws.Int32(1)})
		if apiCode(err) == "NoSuchUpload" {
			return nil
		}
		if err != nil {
			return fmt.Errorf("check that upload is gone: %w", err)
		}
		if attempt == 3 {
			return errors.New("upload still exists after 3 aborts; a bucket lifecycle rule must remove it")
		}
		select {
		case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (s *s3Store) uploadPart(ctx context.Context, key string, uploadID *string, num int32, body io.ReadSeeker, n int64) (types.CompletedPart, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.deadline(n))
	defer cancel()
	out, err := s.client.UploadPart(ctx, &s3.UploadPartInput{
		Bucket:            &s.bucket,
		Key:               s.object(key),
		UploadId:          uploadID,
		PartNumber:        aws.Int32(num),
		Body:              body,
		ContentLength:     aws.Int64(n),
		ChecksumAlgorithm: types.ChecksumAlgorithmCrc32,
	})
	if err != nil {
		return types.CompletedPart{}, err
	}
	return types.CompletedPart{PartNumber: aws.Int32(num), ETag: out.ETag, ChecksumCRC32: out.ChecksumCRC32}, nil
}

func (s *s3Store) readRange(ctx context.Context, key string, off, n int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.deadline(n))
	defer cancel()
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{
		Bucket: &s.bucket,
		Key:    s.object(key),
		Range:  aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1)),
	})
	if err != nil {
		switch {
		case isNoSuchKey(err):
			return nil, fmt.Errorf("read blob %s: %w", key, ErrNotFound)
		case apiCode(err) == "InvalidRange":
			return nil, fmt.Errorf("read blob %s at %d+%d: %w", key, off, n, ErrOutOfRange)
		}
		return nil, fmt.Errorf("read blob %s from bucket %s: %w", key, s.bucket, err)
	}
	defer out.Body.Close()
	// A range that starts inside the object but ends past it is answered
	// with what there is.
	if out.ContentLength == nil || *out.ContentLength != n {
		return nil, fmt.Errorf("read blob %s at %d+%d: got %s bytes: %w", key, off, n, contentLength(out.ContentLength), ErrOutOfRange)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(out.Body, buf); err != nil {
		return nil, fmt.Errorf("read blob %s at %d+%d: %w", key, off, n, err)
	}
	return buf, nil
}

func contentLength(n *int64) string {
	if n == nil {
		return "unknown"
	}
	return strconv.FormatInt(*n, 10)
}

func (s *s3Store) exists(ctx context.Context, key string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.timeout)
	defer cancel()
	_, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: s.object(key)})
	switch {
	case err == nil:
		return true, nil
	case isNoSuchKey(err):
		return false, nil
	default:
		return false, fmt.Errorf("check blob %s in bucket %s: %w", key, s.bucket, err)
	}
}

// isNoSuchKey reports a missing object. HeadObject answers a bare 404 for a
// missing bucket too; Open checked the bucket, so here it means the key.
func isNoSuchKey(err error) bool {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	return errors.As(err, &nsk) || errors.As(err, &nf) || apiCode(err) == "NoSuchKey"
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// list pages through ListObjectsV2, whose keys come sorted.
func (s *s3Store) list(ctx context.Context, prefix string) ([]Object, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.timeout)
	defer cancel()
	var out []Object
	p := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: aws.String(s.prefix + prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list blobs under %q in bucket %s: %w", prefix, s.bucket, err)
		}
		for _, o := range page.Contents {
			if o.Key == nil {
				continue
			}
			obj := Object{Key: strings.TrimPrefix(*o.Key, s.prefix)}
			if o.Size != nil {
				obj.Size = *o.Size
			}
			out = append(out, obj)
		}
	}
	return out, nil
}

// close has nothing to release: idle connections time out on their own.
func (s *s3Store) close() error { return nil }
