// Package s3test gives tests a fresh bucket on the S3-compatible server
// named by PICOMQ_S3_ENDPOINT.
//
// Without PICOMQ_S3_ENDPOINT, S3 tests skip, unless PICOMQ_REQUIRE_S3=1 (as
// tests/run.sh sets), which turns the skip into a failure so that CI never
// passes without running them.
package s3test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// Environment variables read by this package.
const (
	EnvEndpoint  = "PICOMQ_S3_ENDPOINT"   // http(s) URL of the server
	EnvAccessKey = "PICOMQ_S3_ACCESS_KEY" // its access key id
	EnvSecretKey = "PICOMQ_S3_SECRET_KEY" // its secret key
	EnvRequire   = "PICOMQ_REQUIRE_S3"    // "1": a missing server fails instead of skipping
)

// Region is the region of the test buckets.
const Region = "us-east-1"

// URL creates an empty bucket with a unique name and returns its s3store URL
// (path style, with the endpoint and region). It also sets the AWS_*
// credential variables for the rest of the test, so the default credential
// chain of an adapter finds the server's keys; like t.Setenv, it cannot be
// used in parallel tests. The bucket and its objects are removed when the
// test ends.
func URL(t testing.TB) string {
	t.Helper()
	endpoint, access, secret := server(t)
	t.Setenv("AWS_ACCESS_KEY_ID", access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_REGION", Region)
	// Never wait for an instance metadata service that is not there.
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")

	client := Client(t)
	bucket := "pico-test-" + randomHex(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("s3test: create bucket %s: %v", bucket, err)
	}
	t.Cleanup(func() { removeBucket(t, client, bucket) })
	q := url.Values{"region": {Region}, "endpoint": {endpoint}, "pathStyle": {"true"}}
	return "s3://" + bucket + "?" + q.Encode()
}

// WithPrefix returns storeURL, a URL from URL, with a key prefix added.
func WithPrefix(t testing.TB, storeURL, prefix string) string {
	t.Helper()
	u, err := url.Parse(storeURL)
	if err != nil {
		t.Fatalf("s3test: %v", err)
	}
	u.Path = "/" + strings.Trim(prefix, "/")
	return u.String()
}

// Client returns an S3 client for the server, with its credentials given
// explicitly, for tests that inspect or set up buckets directly.
func Client(t testing.TB) *s3.Client {
	t.Helper()
	endpoint, access, secret := server(t)
	return s3.New(s3.Options{
		Region:       Region,
		BaseEndpoint: aws.String(endpoint),
		UsePathStyle: true,
		Credentials:  credentials.NewStaticCredentialsProvider(access, secret, ""),
	})
}

func server(t testing.TB) (endpoint, access, secret string) {
	t.Helper()
	endpoint = os.Getenv(EnvEndpoint)
	if endpoint == "" {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("s3test: %s=1 but %s is not set", EnvRequire, EnvEndpoint)
		}
		t.Skipf("s3test: %s is not set; skipping S3 test (tests/run.sh starts a server)", EnvEndpoint)
	}
	if !strings.HasPrefix(endpoint, "http://") && !strings.HasPrefix(endpoint, "https://") {
		t.Fatalf("s3test: %s must be an http(s) URL, not %q", EnvEndpoint, endpoint)
	}
	access, secret = os.Getenv(EnvAccessKey), os.Getenv(EnvSecretKey)
	if access == "" || secret == "" {
		t.Fatalf("s3test: %s is set but %s or %s is not", EnvEndpoint, EnvAccessKey, EnvSecretKey)
	}
	return endpoint, access, secret
}

// removeBucket deletes every object of the bucket, then the bucket.
func removeBucket(t testing.TB, client *s3.Client, bucket string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pages := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Errorf("s3test: list bucket %s: %v", bucket, err)
			return
		}
		if len(page.Contents) == 0 {
			continue
		}
		ids := make([]types.ObjectIdentifier, len(page.Contents))
		for i, obj := range page.Contents {
			ids[i] = types.ObjectIdentifier{Key: obj.Key}
		}
		out, err := client.DeleteObjects(ctx, &s3.DeleteObjectsInput{
			Bucket: aws.String(bucket),
			Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
		})
		if err == nil {
			if e, failed := firstDeleteError(out.Errors); failed {
				t.Errorf("s3test: delete %s/%s: %s %s", bucket, aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message))
				return
			}
		}
		if err != nil {
			t.Errorf("s3test: empty bucket %s: %v", bucket, err)
			return
		}
	}
	if _, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Errorf("s3test: delete bucket %s: %v", bucket, err)
	}
}

// firstDeleteError is the first error of a DeleteObjects answer but
// NoSuchKey: a node killed as the test ends may have had a delete in
// flight, which the server completes after the listing showed the key.
func firstDeleteError(errs []types.Error) (types.Error, bool) {
	for _, e := range errs {
		if aws.ToString(e.Code) != "NoSuchKey" {
			return e, true
		}
	}
	return types.Error{}, false
}

func randomHex(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatalf("s3test: random name: %v", err)
	}
	return hex.EncodeToString(b)
}
