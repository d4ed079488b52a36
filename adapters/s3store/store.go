// Package s3store is a ports.ObjectStore on an S3-compatible bucket.
//
// The store is named by a URL:
//
//	s3://BUCKET[/PREFIX]?region=REGION&endpoint=URL&pathStyle=true
//
// PREFIX, when given, is put in front of every key (followed by "/"), so
// several stores can share a bucket (the prefix counts towards S3's 1024-byte
// key limit). region defaults to the SDK's (AWS_REGION, the shared config
// file), else us-east-1; endpoint (for servers other than AWS) and pathStyle
// (for servers without virtual-host buckets) are optional.
// Credentials come from the SDK's default chain: the AWS_* environment
// variables, the shared config files, then the instance role.
package s3store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/picomq/pico/adapters/internal/storage/objkey"
	"github.com/picomq/pico/ports"
)

// listPage is the most keys S3 returns in one ListObjectsV2 response.
const listPage = 1000

// Store is an object store in one bucket (and key prefix), safe for
// concurrent use.
type Store struct {
	client *s3.Client
	bucket string
	prefix string // "" or ending in "/"

	// retryable and backoff are the SDK retryer's judgement and delays, for
	// the attempts PutIfAbsent makes itself.
	retryable func(error) bool
	backoff   func(attempt int, err error) (time.Duration, error)
}

var _ ports.ObjectStore = (*Store)(nil)

// Open returns the store named by rawURL (see the package documentation).
// It makes no request: a wrong bucket or credentials show on the first call.
func Open(ctx context.Context, rawURL string) (*Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("s3store: open: %w", err)
	}
	if u.Scheme != "s3" || u.Host == "" {
		return nil, fmt.Errorf("s3store: open %s: want s3://BUCKET[/PREFIX]", rawURL)
	}
	retryer := newRetryer()
	s := &Store{bucket: u.Host, retryable: retryer.IsErrorRetryable, backoff: retryer.RetryDelay}
	if p := strings.Trim(u.Path, "/"); p != "" {
		s.prefix = p + "/"
	}
	var region, endpoint string
	var pathStyle bool
	for name, values := range u.Query() {
		value := values[len(values)-1]
		switch name {
		case "region":
			region = value
		case "endpoint":
			e, err := url.Parse(value)
			if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
				return nil, fmt.Errorf("s3store: open %s: endpoint %q is not an http(s) URL", rawURL, value)
			}
			endpoint = value
		case "pathStyle":
			if pathStyle, err = strconv.ParseBool(value); err != nil {
				return nil, fmt.Errorf("s3store: open %s: pathStyle %q is not a boolean", rawURL, value)
			}
		default:
			return nil, fmt.Errorf("s3store: open %s: unknown parameter %q", rawURL, name)
		}
	}

	opts := []func(*config.LoadOptions) error{
		config.WithHTTPClient(httpClient()),
		config.WithRetryer(func() aws.Retryer { return retryer }),
	}
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("s3store: open %s: %w", rawURL, err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	s.client = s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.UsePathStyle = pathStyle
		// Bodies are checksummed on upload (CRC32, checked by the server).
		// Ranged reads, the common case, cannot be checked against a
		// whole-object checksum, so responses are not validated.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenSupported
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		o.DisableLogOutputChecksumValidationSkipped = true
		o.APIOptions = append(o.APIOptions, unsignedPayload)
	})
	return s, nil
}

// unsignedPayload signs requests with UNSIGNED-PAYLOAD, as the SDK does
// over https, instead of the body's SHA-256: the CRC32 checksum already
// guards a body's integrity, and over http the SHA-256 would cost both sides
// another pass over every byte, a data object's megabytes each second. It
// runs first in the finalize step, so the checksum step computes the CRC32
// alone.
func unsignedPayload(stack *middleware.Stack) error {
	return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("UnsignedPayloadHash",
		func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (
			middleware.FinalizeOutput, middleware.Metadata, error,
		) {
			return next.HandleFinalize(v4.SetPayloadHash(ctx, "UNSIGNED-PAYLOAD"), in)
		}), middleware.Before)
}

// httpClient keeps connections alive and enough of them idle per host for
// hundreds of concurrent requests to one endpoint.
func httpClient() *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().
		WithTransportOptions(func(t *http.Transport) {
			t.MaxIdleConns = 1024
			t.MaxIdleConnsPerHost = 256
			t.IdleConnTimeout = 90 * time.Second
		}).
		WithDialerOptions(func(d *net.Dialer) {
			d.Timeout = 10 * time.Second
			d.KeepAlive = 30 * time.Second
		})
}

// newRetryer is the SDK's standard retryer (3 attempts, jittered backoff)
// without its retry quota, whose token bucket would turn a burst of failures
// among hundreds of concurrent requests into failures without retries.
func newRetryer() *retry.Standard {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.RateLimiter = ratelimit.None
	})
}

// Put implements ports.ObjectStore.
func (s *Store) Put(ctx context.Context, key string, body []byte) error {
	if err := objkey.Check(key); err != nil {
		return fmt.Errorf("s3store: put: %w", err)
	}
	in := s.putInput(key, body)
	_, err := s.client.PutObject(ctx, in)
	in.Body.(*requestBody).end()
	if err != nil {
		return fmt.Errorf("s3store: put %s: %w", key, s.explain(err))
	}
	return nil
}

// PutIfAbsent implements ports.ObjectStore with If-None-Match: *.
//
// A request whose outcome is unknown (the connection broke, the server
// failed) may have stored the object, and retrying it blindly would then be
// refused by its own earlier attempt. So PutIfAbsent makes its attempts
// itself and, after such a failure, reads the key: if it holds exactly body,
// the put is done; if it holds another object, the put lost; if it is absent,
// the put is tried again. Writers racing for a key should therefore write
// bodies that differ (say, carry the writer's identity); otherwise two of
// them may both be told they won, though the stored object is the same.
//
// Some servers (versitygw among them) answer a refused put before reading a
// large body and close the connection, which the client sees as a broken
// connection rather than 412; reading the key resolves that too.
func (s *Store) PutIfAbsent(ctx context.Context, key string, body []byte) error {
	if err := objkey.Check(key); err != nil {
		return fmt.Errorf("s3store: put-if-absent: %w", err)
	}
	in := s.putInput(key, body)
	in.IfNoneMatch = aws.String("*")
	unknown := false // an attempt failed in a way that may have stored body
	for attempt := 1; ; attempt++ {
		_, err := s.client.PutObject(ctx, in, func(o *s3.Options) { o.Retryer = aws.NopRetryer{} })
		in.Body.(*requestBody).end()
		if err == nil {
			return nil
		}
		conflict := errorCode(err) == "ConditionalRequestConflict"
		refused := isPrecondition(err) && !conflict
		again := conflict || (s.retryable(err) && ctx.Err() == nil)
		switch {
		case refused && !unknown:
			return fmt.Errorf("s3store: put-if-absent %s: %w", key, ports.ErrPrecondition)
		case !refused && !conflict && again:
			unknown = true
		}
		if unknown || refused {
			// Whatever the key holds now tells who won.
			stored, gerr := s.get(ctx, key, 0, -1)
			switch {
			case gerr == nil && bytes.Equal(stored, body):
				return nil
			case gerr == nil || refused:
				return fmt.Errorf("s3store: put-if-absent %s: %w", key, ports.ErrPrecondition)
			case !errors.Is(gerr, ports.ErrNotFound):
				return fmt.Errorf("s3store: put-if-absent %s: %w (outcome unknown: reading the key back failed: %v)", key, s.explain(err), gerr)
			}
		}
		if !again || attempt == putIfAbsentAttempts {
			if conflict {
				return fmt.Errorf("s3store: put-if-absent %s: %w (conflicting writes persisted: %v)", key, ports.ErrPrecondition, err)
			}
			return fmt.Errorf("s3store: put-if-absent %s: %w", key, s.explain(err))
		}
		delay, _ := s.backoff(attempt, err)
		if werr := sleep(ctx, delay); werr != nil {
			return fmt.Errorf("s3store: put-if-absent %s: %w (after %v)", key, werr, s.explain(err))
		}
		in.Body = newRequestBody(body)
	}
}

// putIfAbsentAttempts bounds the requests of one PutIfAbsent, like the SDK's
// standard retryer for other calls.
const putIfAbsentAttempts = retry.DefaultMaxAttempts

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (s *Store) putInput(key string, body []byte) *s3.PutObjectInput {
	return &s3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(s.prefix + key),
		Body:          newRequestBody(body), // seekable, so retries resend it
		ContentLength: aws.Int64(int64(len(body))),
	}
}

// Get implements ports.ObjectStore with a ranged GET.
func (s *Store) Get(ctx context.Context, key string, off, length int64) ([]byte, error) {
	if err := objkey.Check(key); err != nil {
		return nil, fmt.Errorf("s3store: get: %w", err)
	}
	if off < 0 {
		return nil, fmt.Errorf("s3store: get %s: negative offset %d", key, off)
	}
	body, err := s.get(ctx, key, off, length)
	if err != nil {
		return nil, fmt.Errorf("s3store: get %s: %w", key, err)
	}
	return body, nil
}

func (s *Store) get(ctx context.Context, key string, off, length int64) ([]byte, error) {
	if length == 0 {
		// No byte range is empty, so only the object's existence is asked.
		_, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + key)})
		if err != nil {
			return nil, s.explain(notFound(err))
		}
		return []byte{}, nil
	}
	in := &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + key)}
	ranged := off > 0 || length > 0
	if ranged {
		r := fmt.Sprintf("bytes=%d-", off)
		if length > 0 && length <= (1<<63-1)-off {
			r += strconv.FormatInt(off+length-1, 10)
		}
		in.Range = aws.String(r)
	}
	out, err := s.client.GetObject(ctx, in)
	if err != nil {
		// 416: the range starts at or past the end of an object that exists.
		if errorCode(err) == "InvalidRange" || httpStatus(err) == http.StatusRequestedRangeNotSatisfiable {
			return []byte{}, nil
		}
		return nil, s.explain(notFound(err))
	}
	defer out.Body.Close()
	body, err := readBody(out.Body, aws.ToInt64(out.ContentLength))
	if err != nil {
		return nil, err
	}
	if ranged && out.ContentRange == nil {
		// The server ignored the range and sent the whole object.
		body = cut(body, off, length)
	}
	return body, nil
}

func readBody(r io.Reader, size int64) ([]byte, error) {
	if size <= 0 {
		return io.ReadAll(r)
	}
	buf := make([]byte, size)
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

func cut(body []byte, off, length int64) []byte {
	size := int64(len(body))
	if off >= size {
		return []byte{}
	}
	end := size
	if length >= 0 && length < size-off {
		end = off + length
	}
	return body[off:end]
}

// List implements ports.ObjectStore with ListObjectsV2, following pages until
// limit keys are found or the listing ends.
func (s *Store) List(ctx context.Context, prefix, after string, limit int) ([]ports.ObjectInfo, error) {
	if limit < 1 {
		return nil, fmt.Errorf("s3store: list %s: limit %d is not positive", prefix, limit)
	}
	var out []ports.ObjectInfo
	var token *string
	for len(out) < limit {
		in := &s3.ListObjectsV2Input{
			Bucket:  aws.String(s.bucket),
			MaxKeys: aws.Int32(int32(min(limit-len(out), listPage))),
		}
		if p := s.prefix + prefix; p != "" {
			in.Prefix = aws.String(p)
		}
		if token != nil {
			in.ContinuationToken = token
		} else if after != "" {
			in.StartAfter = aws.String(s.prefix + after)
		}
		page, err := s.client.ListObjectsV2(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("s3store: list %s: %w", prefix, s.explain(err))
		}
		for _, obj := range page.Contents {
			key := strings.TrimPrefix(aws.ToString(obj.Key), s.prefix)
			if key <= after || !strings.HasPrefix(key, prefix) || len(out) == limit {
				continue
			}
			out = append(out, ports.ObjectInfo{Key: key, Size: aws.ToInt64(obj.Size)})
		}
		if !aws.ToBool(page.IsTruncated) || page.NextContinuationToken == nil {
			break
		}
		token = page.NextContinuationToken
	}
	return out, nil
}

// Delete implements ports.ObjectStore: one key with DeleteObject, more with
// DeleteObjects, up to deleteBatch keys per request.
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	for _, key := range keys {
		if err := objkey.Check(key); err != nil {
			return fmt.Errorf("s3store: delete: %w", err)
		}
	}
	if len(keys) == 1 {
		_, err := s.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + keys[0])})
		if err != nil && !errors.Is(notFound(err), ports.ErrNotFound) {
			return fmt.Errorf("s3store: delete %s: %w", keys[0], s.explain(err))
		}
		return nil
	}
	for batch := range slices.Chunk(keys, deleteBatch) {
		if err := s.deleteMany(ctx, batch); err != nil {
			return err
		}
	}
	return nil
}

// deleteBatch is the most keys S3 takes in one DeleteObjects request.
const deleteBatch = 1000

func (s *Store) deleteMany(ctx context.Context, keys []string) error {
	ids := make([]types.ObjectIdentifier, len(keys))
	for i, key := range keys {
		ids[i] = types.ObjectIdentifier{Key: aws.String(s.prefix + key)}
	}
	out, err := s.client.DeleteObjects(ctx, &s3.DeleteObjectsInput{Bucket: aws.String(s.bucket),
		Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)}})
	if err != nil {
		return fmt.Errorf("s3store: delete %d keys from %s: %w", len(keys), keys[0], s.explain(err))
	}
	// Quiet mode lists only the keys that failed.
	for _, e := range out.Errors {
		if code := aws.ToString(e.Code); code != "NoSuchKey" {
			return fmt.Errorf("s3store: delete %s: %s: %s", strings.TrimPrefix(aws.ToString(e.Key), s.prefix), code, aws.ToString(e.Message))
		}
	}
	return nil
}

// notFound turns a missing-key error into ports.ErrNotFound. A missing
// bucket is a different error: the store is misconfigured.
func notFound(err error) error {
	switch errorCode(err) {
	case "NoSuchKey", "NotFound":
		return ports.ErrNotFound
	case "NoSuchBucket":
		return err
	}
	if httpStatus(err) == http.StatusNotFound {
		return ports.ErrNotFound
	}
	return err
}

// isPrecondition reports a refused conditional put: 412, or a 409 conflict
// with another conditional write that retries did not resolve.
func isPrecondition(err error) bool {
	switch errorCode(err) {
	case "PreconditionFailed", "ConditionalRequestConflict":
		return true
	}
	return httpStatus(err) == http.StatusPreconditionFailed
}

func errorCode(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

func httpStatus(err error) int {
	var respErr *awshttp.ResponseError
	if errors.As(err, &respErr) {
		return respErr.HTTPStatusCode()
	}
	return 0
}

// requestBody is a request body that is not read once its call has
// returned (end): net/http may go on reading a body after the response
// (an early answer, a broken connection), and the caller owns the slice
// again, and may reuse it, as soon as Put returns.
type requestBody struct {
	mu    sync.Mutex
	r     *bytes.Reader
	ended bool
}

var errBodyEnded = errors.New("s3store: request body read after its call returned")

func newRequestBody(b []byte) *requestBody { return &requestBody{r: bytes.NewReader(b)} }

func (b *requestBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return 0, errBodyEnded
	}
	return b.r.Read(p)
}

// WriteTo lets the SDK's checksum and signing hashes, which copy the body
// with io.Copy, take it in one write instead of through a copy buffer.
func (b *requestBody) WriteTo(w io.Writer) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return 0, errBodyEnded
	}
	return b.r.WriteTo(w)
}

func (b *requestBody) Seek(offset int64, whence int) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return 0, errBodyEnded
	}
	return b.r.Seek(offset, whence)
}

func (b *requestBody) end() {
	b.mu.Lock()
	b.ended = true
	b.mu.Unlock()
}
