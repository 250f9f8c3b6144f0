package tape

// ReportRow is one message of a tape, for tychora tape report.
type ReportRow struct {
	Seq   int       `json:"seq"`
	AtMS  float64   `json:"at_ms"`
	Dir   Direction `json:"dir"`
	Kind  Kind      `json:"kind"`
	What  string    `json:"what"` // the method, "tools/call NAME", or the echoed method of a response
	Bytes int       `json:"bytes"`
	MS    float64   `json:"ms,omitempty"` // a response: how long its request took
}

// Report lists the messages of t in the order they crossed the wire.
func Report(t *Tape) []ReportRow {
	rows := make([]ReportRow, 0, len(t.Events))
	for _, e := range t.Events {
		r := ReportRow{Seq: e.Seq, AtMS: e.AtMS, Dir: e.Dir, Kind: e.Kind, Bytes: len(e.Payload), MS: e.MS}
		method := e.Method
		if e.Echo != nil {
			method = e.Echo.Method
		}
		r.What = looseKey(method, e.Tool)
		if r.What == "" {
			r.What = "-"
		}
		rows = append(rows, r)
	}
	return rows
}
