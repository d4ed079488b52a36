package s3test_test

import (
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/picomq/pico/tests/s3test"
)

func bucketOf(t *testing.T, storeURL string) string {
	t.Helper()
	u, err := url.Parse(storeURL)
	if err != nil || u.Scheme != "s3" || u.Host == "" {
		t.Fatalf("URL() = %q, want s3://BUCKET?…", storeURL)
	}
	q := u.Query()
	if q.Get("endpoint") != os.Getenv(s3test.EnvEndpoint) || q.Get("pathStyle") != "true" || q.Get("region") != s3test.Region {
		t.Fatalf("URL() = %q lacks the endpoint, path style or region", storeURL)
	}
	return u.Host
}

func TestBucketIsFreshAndRemoved(t *testing.T) {
	client := s3test.Client(t) // skips without a server
	var buckets []string
	for range 2 {
		t.Run("use", func(t *testing.T) {
			bucket := bucketOf(t, s3test.URL(t))
			buckets = append(buckets, bucket)
			if os.Getenv("AWS_ACCESS_KEY_ID") != os.Getenv(s3test.EnvAccessKey) {
				t.Fatal("AWS_ACCESS_KEY_ID is not the server's access key")
			}
			list, err := client.ListObjectsV2(t.Context(), &s3.ListObjectsV2Input{Bucket: aws.String(bucket)})
			if err != nil {
				t.Fatalf("list new bucket: %v", err)
			}
			if len(list.Contents) != 0 {
				t.Fatalf("new bucket holds %d objects", len(list.Contents))
			}
			// More objects than one listing page holds, for the cleanup to remove.
			var wg sync.WaitGroup
			for w := range 16 {
				wg.Go(func() {
					for i := w; i < 1010; i += 16 {
						key := fmt.Sprintf("obj/%02d/%04d", i%13, i)
						if _, err := client.PutObject(t.Context(), &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: strings.NewReader("x")}); err != nil {
							t.Errorf("put %s: %v", key, err)
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
	if len(buckets) != 2 || buckets[0] == buckets[1] {
		t.Fatalf("buckets %q, want two different ones", buckets)
	}
	for _, bucket := range buckets {
		if _, err := client.HeadBucket(t.Context(), &s3.HeadBucketInput{Bucket: aws.String(bucket)}); err == nil {
			t.Errorf("bucket %s still exists after its test", bucket)
		}
	}
}
