package tape

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzReadTrace: the trace reader never panics, and what it accepts is
// written back by the recorder's encoding and read again the same.
func FuzzReadTrace(f *testing.F) {
	f.Add([]byte(`{"seq":1,"at_ms":1.5,"dir":"c2s","kind":"request","id":1,"method":"tools/call","tool":"echo","payload":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}}` + "\n" +
		`{"seq":2,"at_ms":2,"dir":"s2c","kind":"response","id":1,"tool":"echo","payload":{"jsonrpc":"2.0","id":1,"result":{}},"echo":{"method":"tools/call","params":{"name":"echo"}},"ms":0.5}`))
	f.Add([]byte(`{"seq":1,"dir":"c2s","kind":"invalid","payload":"not json"}` + "\n\n"))
	f.Add([]byte(`{"seq":1,"dir":"s2c","kind":"error","id":"a","payload":{},"echo":{"method":""},"batch":2}`))
	f.Add([]byte("{}\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		events, err := ReadTrace(bytes.NewReader(data))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("an error that names no line: %v", err)
			}
			return
		}
		var buf bytes.Buffer
		for _, e := range events {
			b, err := marshalCompact(e)
			if err != nil {
				t.Fatal(err)
			}
			buf.Write(append(b, '\n'))
		}
		again, err := ReadTrace(&buf)
		if err != nil || len(again) != len(events) {
			t.Fatalf("the reader refuses what it read: %v (%d, want %d)", err, len(again), len(events))
		}
		tp := &Tape{Events: events}
		_ = tp.Exchanges()
		_, _ = NewPlayer(tp, PlayOptions{})
	})
}

// FuzzMatchKey: keys ignore spacing, key order and _meta; a call finds
// the recorded exchange with its own key, once.
func FuzzMatchKey(f *testing.F) {
	f.Add("tools/call", []byte(`{"name":"search","arguments":{"request":{"question":"q","limit":3}}}`))
	f.Add("resources/read", []byte(`{"uri":"tychora://kinds/markdown","_meta":{"progressToken":1}}`))
	f.Add("initialize", []byte(`{"protocolVersion":"2025-06-18"}`))
	f.Add("tools/list", []byte(`null`))
	f.Add("x", []byte(`[1, 2.50, "\u00e9", {"b":1,"a":[]}]`))
	f.Fuzz(func(t *testing.T, method string, params []byte) {
		key, err := MatchKey(method, params)
		if err != nil {
			return
		}
		var v any
		if json.Unmarshal(params, &v) == nil {
			if m, ok := v.(map[string]any); ok {
				m["_meta"] = map[string]any{"progressToken": "p"}
			}
			indented, err := json.MarshalIndent(v, " ", "\t")
			if err != nil {
				t.Fatal(err)
			}
			other, err := MatchKey(method, indented)
			if err != nil {
				t.Fatalf("a re-encoding is refused: %v", err)
			}
			if other != key && !lossyNumbers(params) {
				t.Fatalf("keys differ:\n%s\n%s", key, other)
			}
		}
		x := &Exchange{Method: method, Params: params, Tool: toolName(method, params), Request: &Event{Seq: 1}, Response: &Event{Seq: 2}}
		m, err := NewMatcher([]*Exchange{x})
		if err != nil {
			t.Fatal(err)
		}
		if got, drift := m.Take(method, params, false); got != x || drift != "" {
			t.Fatalf("a call does not find its own exchange: %v %q", got, drift)
		}
		if got, drift := m.Take(method, params, true); got != nil || drift == "" {
			t.Fatal("an exchange was taken twice")
		}
	})
}

// lossyNumbers reports whether params holds a number that decoding into
// float64 (the re-encoding above) may spell otherwise.
func lossyNumbers(params []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(params))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if n, ok := tok.(json.Number); ok {
			f, err := n.Float64()
			b, _ := json.Marshal(f)
			if err != nil || string(b) != n.String() {
				return true
			}
		}
	}
}

// FuzzRecorder: whatever bytes cross a recorded stream (cut anywhere
// into writes), and whatever an HTTP event stream holds, the bytes pass
// unchanged and the recorder writes a trace that reads back.
func FuzzRecorder(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n[1,2]\nnot json\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"), uint8(3))
	f.Add([]byte("event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"a\":\"Bearer x\"}}\n\ndata: {}\r\n\r\n"), uint8(5))
	f.Add([]byte("{\"Authorization\":\"tyc_0123456789abcdef0123\"}\n"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, cut uint8) {
		var trace closingBuffer
		rec, err := newRecorder(&trace, Options{Redact: []string{`x+y`}})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		w := rec.Writer(&out, FromServer)
		step := int(cut%16) + 1
		for i := 0; i < len(data); i += step {
			if _, err := w.Write(data[i:min(i+step, len(data))]); err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(out.Bytes(), data) {
			t.Fatal("the tee changed the bytes")
		}
		sse := &recordingWriter{rec: rec, sse: true}
		for i := 0; i < len(data); i += step {
			sse.feed(data[i:min(i+step, len(data))])
		}
		sse.line(nil)
		if err := rec.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadTrace(&trace); err != nil {
			t.Fatalf("the recorder wrote a trace that does not read: %v", err)
		}
	})
}

// closingBuffer is a trace in memory (a file's fsync would slow the
// fuzzing engine to a crawl).
type closingBuffer struct{ bytes.Buffer }

func (*closingBuffer) Close() error { return nil }
