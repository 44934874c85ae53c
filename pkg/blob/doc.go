// Package blob is where finished WARC segments end up: a folder in the embedded
// mode, an S3 bucket (AWS S3, MinIO, or any S3-compatible server) in a cluster.
//
// The parser tier writes segments to local disk (package warc); when a segment is
// closed and fsynced, its SegmentConfig.OnClose hook calls Store.Put to copy it
// into the blob store, and the metadata store records captures by (key, offset,
// length). Store.ReadRange turns such a location back into the bytes of one WARC
// record, which package warc can decompress and parse on its own.
//
// # Backends
//
// Open picks the backend from a URL, so one flag (--blobs) chooses embedded or
// real:
//
//	file:///data/warc
//	s3://bucket/optional/prefix?endpoint=http://127.0.0.1:9000&region=us-east-1
//
// The file backend keeps each key as a file under the folder. Put hard-links the
// source file into place when both are on one filesystem and copies it otherwise;
// either way it writes a temporary name, fsyncs the file, renames it to the key
// and fsyncs the directory, so a reader never sees a partial file and a completed
// Put survives a power cut. The source file is never moved or removed: deleting
// the local segment afterwards is the caller's choice. Because a hard link shares
// the file, the source must not be modified after Put (closed segments never
// are).
//
// The S3 backend uploads files up to the part size (WithPartSize, default 16 MiB)
// with one PutObject and larger ones as a multipart upload of parts sent in
// parallel. Both become visible only when complete, so a reader never sees a
// partial object. A multipart upload that fails is aborted; one interrupted by a
// crash leaves invisible parts behind, which a bucket lifecycle rule
// (AbortIncompleteMultipartUpload, a day is plenty) should remove. Put is
// idempotent: uploading a key again after a crash replaces the object with the
// same bytes.
//
// S3 URL parameters:
//
//	endpoint    server URL for MinIO and other S3-compatible servers; without it
//	            the SDK's AWS endpoint for the region is used
//	region      signing region; else AWS_REGION / the shared config; else us-east-1
//	path_style  "true" or "false"; default true when endpoint is set (MinIO needs
//	            it), false otherwise (AWS's virtual-hosted addressing)
//	access_key, secret_key
//	            static credentials, both or neither; meant for tests and local
//	            set-ups. They take precedence over the SDK's default chain:
//	            AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (/ AWS_SESSION_TOKEN),
//	            then the shared config and credentials files (AWS_PROFILE), then
//	            web identity, container and instance roles.
//
// The credentials need s3:ListBucket (Open checks the bucket, and without it
// S3 answers 403 rather than 404 for a missing key, so Exists could not say
// "no"), s3:PutObject, s3:GetObject, s3:AbortMultipartUpload and
// s3:ListMultipartUploadParts (to confirm an abort).
//
// A URL that carries secret_key must not be logged as it is: log Redact(url), as
// Store.String does. Errors from this package never include the secret.
//
// # Deadlines, retries and metrics
//
// Every call runs under a deadline of WithTimeout (default 30 s) plus the time
// the bytes involved take at WithMinRate (default 1 MiB/s), so a 1 GiB segment
// gets about 17 minutes and a hung server cannot stall a parser forever. S3
// requests are retried by the SDK's standard retryer with WithMaxAttempts
// attempts (default 3), each multipart part on its own.
//
// With WithRegisterer, a store exports crawler_blob_operation_duration_seconds,
// crawler_blob_errors_total and crawler_blob_bytes_total, labelled by operation
// (put, read_range, exists) and backend (file, s3).
package blob
