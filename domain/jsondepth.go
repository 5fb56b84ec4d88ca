package domain

// MaxJSONDepth bounds how deeply JSON may nest wherever it comes in: MCP
// requests, relayed model calls, inbound bodies, a message's extra,
// settings. Real payloads nest a dozen levels. Go's decoder stops at
// 10,000 and SQLite's JSON functions at 1,000, so a body nested between
// the two used to be stored and then break every read of its stream.
const MaxJSONDepth = 100

// CheckJSONDepth refuses JSON that nests deeper than MaxJSONDepth, naming
// field and the limit. It is one pass over the bytes counting brackets
// outside strings, decoding nothing, so on a hot path it costs a fraction
// of the decode that follows; it does not check that the JSON is valid.
func CheckJSONDepth(field string, data []byte) error {
	depth, inString := 0, false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++ // the escaped character
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			if depth++; depth > MaxJSONDepth {
				return Invalid(field, "is JSON nested more than %d levels deep; the limit is %d", MaxJSONDepth, MaxJSONDepth)
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}
