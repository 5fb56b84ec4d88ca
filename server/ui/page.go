package ui

import (
	"net/http"
	"net/url"
	"strconv"
)

// defaultLimit is how many rows a list shows per page.
const defaultLimit = 50

// limitOf reads ?limit=, kept between 1 and 200.
func limitOf(r *http.Request) int {
	n, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil || n <= 0 {
		return defaultLimit
	}
	return min(n, 200)
}

// pager links a list's pages: back to the first, on to the next.
type pager struct {
	First, Next string
}

// newPager builds the links of a list paged by the query parameter param,
// whose next cursor is next ("" at the end).
func newPager(r *http.Request, param, next string) pager {
	var p pager
	q := r.URL.Query()
	if q.Get(param) != "" {
		q.Del(param)
		p.First = r.URL.Path + encode(q)
	}
	if next != "" {
		q.Set(param, next)
		p.Next = r.URL.Path + encode(q)
	}
	return p
}

func encode(q url.Values) string {
	if s := q.Encode(); s != "" {
		return "?" + s
	}
	return ""
}

// pageAfter pages a list sorted by key: up to limit items after the
// cursor, and the cursor of the next page ("" when this is the last).
func pageAfter[T any](items []T, key func(T) string, after string, limit int) ([]T, string) {
	start := 0
	if after != "" {
		for start < len(items) && key(items[start]) <= after {
			start++
		}
	}
	end := min(start+limit, len(items))
	page := items[start:end]
	if end < len(items) && len(page) > 0 {
		return page, key(page[len(page)-1])
	}
	return page, ""
}
