package bus

// AppendJSONString appends s quoted as a JSON string, as encoding/json writes it and
// as results are encoded: for those who add fields to a result's JSON (the history).
func AppendJSONString(b []byte, s string) []byte { return appendJSONString(b, s) }
