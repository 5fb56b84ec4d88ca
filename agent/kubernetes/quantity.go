package kubernetes

import (
	"errors"

	"github.com/helixml/helix-org/domain"
)

// quantity is Kubernetes' quantity grammar (a number, then a binary or
// decimal SI suffix or a decimal exponent), unsigned: a pod's CPU and
// memory are never negative.
var quantity = domain.LazyRegexp(`^\+?([0-9]+\.?[0-9]*|\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?$`)

// checkQuantity refuses what the apiserver would refuse as a quantity, so
// a bad setting is named when it is set, not when a run starts.
func checkQuantity(q string) error {
	if !quantity().MatchString(q) {
		return errors.New("quantities are a number and an optional suffix: m, k, M, G, T, Ki, Mi, Gi, Ti")
	}
	return nil
}
