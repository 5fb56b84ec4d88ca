package domain

// CreditDepths walks led_to links backwards from id and returns each
// insight an outcome of id credits, with its depth: id itself at 0, the
// insight whose recall led to it at 1, and so on up to maxCreditDepth.
// parents(x) lists the insights linked led_to x. An insight reached by two
// paths counts once, at its shallowest depth; a cycle ends the walk.
func CreditDepths(id string, parents func(string) ([]string, error)) (map[string]int, error) {
	depth := map[string]int{id: 0}
	level := []string{id}
	for d := 1; d <= maxCreditDepth && len(level) > 0; d++ {
		var next []string
		for _, x := range level {
			ps, err := parents(x)
			if err != nil {
				return nil, err
			}
			for _, p := range ps {
				if _, seen := depth[p]; !seen {
					depth[p] = d
					next = append(next, p)
				}
			}
		}
		level = next
	}
	return depth, nil
}
