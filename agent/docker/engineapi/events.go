package engineapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/docker/docker/api/types/events"
)

// maxEvent bounds one event on the stream: an engine cannot make the
// client hold more for a line that does not end.
const maxEvent = 1 << 20

// Events follows the engine's events that match opts.Filters, from
// opts.Since (as far back as the engine's recent history goes) until ctx
// ends or opts.Until. The request is made before it returns; but the
// engine answers before it subscribes, so only Since makes sure an event
// right after the call is not missed. Events come in order on the first
// channel; how the stream ended on the second — ctx's error, io.EOF when
// the engine ended it, or what went wrong — after which nothing comes.
func (c *Client) Events(ctx context.Context, opts events.ListOptions) (<-chan events.Message, <-chan error) {
	msgC, errC := make(chan events.Message), make(chan error, 1)
	q := url.Values{}
	if opts.Since != "" {
		q.Set("since", opts.Since)
	}
	if opts.Until != "" {
		q.Set("until", opts.Until)
	}
	if err := setFilters(q, opts.Filters); err != nil {
		errC <- err
		return msgC, errC
	}
	resp, err := c.send(ctx, http.MethodGet, "/events", q, nil, "")
	if err != nil {
		errC <- err
		return msgC, errC
	}
	go func() {
		defer resp.Body.Close()
		errC <- readEvents(ctx, resp.Body, msgC)
	}()
	return msgC, errC
}

// readEvents sends each line of r, one JSON event, on out; it returns
// why it stopped.
func readEvents(ctx context.Context, r io.Reader, out chan<- events.Message) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4<<10), maxEvent)
	for sc.Scan() {
		var m events.Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return fmt.Errorf("events: an event does not decode: %w", err)
		}
		select {
		case out <- m:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	switch err := sc.Err(); {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("events: an event is over %d KiB", maxEvent>>10)
	case err != nil:
		return fmt.Errorf("events: read: %w", err)
	}
	return io.EOF
}
