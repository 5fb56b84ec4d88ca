package store_test

import (
	"testing"
	"time"

	"github.com/helixml/helix-org/store"
	"github.com/helixml/helix-org/store/storetest"
)

// BenchmarkAuthenticate is what every request on a worker's endpoint
// pays before anything else: a token whose bearer is kept, so the cost is
// the one read of the cache epochs and the kept answer's lookup.
func BenchmarkAuthenticate(b *testing.B) {
	st := storetest.New(b)
	if _, err := st.Bootstrap(b.Context(), []string{"publish"}); err != nil {
		b.Fatal(err)
	}
	tok, err := st.CreateToken(b.Context(), store.TokenSpec{WorkerID: store.OwnerWorker, Kind: store.TokenOperator})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := st.Authenticate(b.Context(), tok); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := st.Authenticate(b.Context(), tok); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-us/op")
}
