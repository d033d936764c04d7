package history

import (
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
)

// Only a message larger than the stream keeps is given up; a duplicate still in the
// stream's pipeline (seen in CI: 1,026 messages dropped on it) and every other
// refusal are sent again.
func TestRefusedForGood(t *testing.T) {
	for _, c := range []struct {
		err  error
		good bool
	}{
		{&jetstream.APIError{Code: 400, ErrorCode: 10054, Description: "message size exceeds maximum allowed"}, true},
		{fmt.Errorf("wrapped: %w", &jetstream.APIError{Code: 400, ErrorCode: 10054}), true},
		{&jetstream.APIError{Code: 409, ErrorCode: 10158, Description: "duplicate message id is in process"}, false},
		{&jetstream.APIError{Code: 503, ErrorCode: 10008}, false},
		{jetstream.ErrNoStreamResponse, false},
		{jetstream.ErrAsyncPublishTimeout, false},
	} {
		if got := refusedForGood(c.err); got != c.good {
			t.Errorf("refusedForGood(%v) = %v, want %v", c.err, got, c.good)
		}
	}
}
