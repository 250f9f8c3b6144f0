package tape

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tychora/tychora/interfaces"
	"github.com/tychora/tychora/workspace"
)

// ErrServerRequests is wrapped by the error NewPlayer returns for a tape
// in which the server sent the client requests (sampling/createMessage,
// elicitation/create, roots/list): a replay would have to answer as the
// client, which it cannot.
var ErrServerRequests = errors.New("the tape holds requests of the server")

// CodeDrift is the JSON-RPC error code of a call other than tools/call
// that matches no recorded exchange (a tools/call gets a tool error).
const CodeDrift = jsonrpc.CodeInvalidParams

// PlayOptions configure a Player. The zero value works.
type PlayOptions struct {
	// Lenient lets a call with no exact match take the earliest
	// unconsumed exchange of the same tool (or method).
	Lenient bool
	// Logger gets one line per drift; nil means silent.
	Logger *slog.Logger
}

// Player answers MCP requests from a tape alone.
type Player struct {
	tape    *Tape
	opts    PlayOptions
	hello   map[string]*jsonrpc.Response // the recorded answer to each handshake method
	mu      sync.Mutex
	matcher *Matcher
	answers map[*Exchange]*jsonrpc.Response
}

// NewPlayer prepares t for replay. It refuses a tape in which the server
// sent requests (other than ping) with an INVALID_ARGUMENT error wrapping
// ErrServerRequests, and a tape whose responses do not decode.
func NewPlayer(t *Tape, o PlayOptions) (*Player, error) {
	var serverMethods []string
	for _, e := range t.Events {
		if e.Dir == FromServer && e.Kind == KindRequest && e.Method != "ping" && !slices.Contains(serverMethods, e.Method) {
			serverMethods = append(serverMethods, e.Method)
		}
	}
	if len(serverMethods) > 0 {
		return nil, workspace.Wrap(workspace.CodeInvalidArgument, ErrServerRequests,
			fmt.Sprintf("tape %s cannot be played: the server sent the client requests (%s), which a replay cannot answer as the client", t.Dir, strings.Join(serverMethods, ", ")))
	}
	xs := t.Exchanges()
	m, err := NewMatcher(xs)
	if err != nil {
		return nil, workspace.Wrap(workspace.CodeInvalidArgument, err, fmt.Sprintf("tape %s: %v", t.Dir, err))
	}
	p := &Player{tape: t, opts: o, matcher: m, answers: map[*Exchange]*jsonrpc.Response{}, hello: map[string]*jsonrpc.Response{}}
	for _, x := range xs {
		if x.Response == nil {
			continue
		}
		msg, err := jsonrpc.DecodeMessage(x.Response.Payload)
		resp, ok := msg.(*jsonrpc.Response)
		if err != nil || !ok {
			return nil, workspace.Errorf(workspace.CodeInvalidArgument, "tape %s: the response at seq %d is no JSON-RPC response", t.Dir, x.Response.Seq)
		}
		p.answers[x] = resp
		if handshake(x.Method) && p.hello[x.Method] == nil {
			p.hello[x.Method] = resp
		}
	}
	return p, nil
}

// Serve answers the newline-delimited JSON-RPC requests read from in on
// out until in ends (nil) or ctx is done (ctx.Err()). Notifications and
// responses of the client are read and dropped. Each answer is written
// as one line.
func (p *Player) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	stop := make(chan struct{}) // Serve returned: the reader stops at its next line
	defer close(stop)
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := readLine(br)
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case lines <- bytes.Clone(line):
				case <-stop:
					return
				}
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				readErr <- err
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-readErr:
			return err
		case line := <-lines:
			answer := p.Answer(line)
			if answer == nil {
				continue
			}
			if _, err := out.Write(append(answer, '\n')); err != nil {
				return fmt.Errorf("write answer: %w", err)
			}
		}
	}
}

// Answer is the line that answers line, one message a client sent, or nil
// when it needs none (a notification, a response).
func (p *Player) Answer(line []byte) []byte {
	line = bytes.TrimSpace(line)
	if len(line) > 0 && line[0] == '[' {
		return encode(&jsonrpc.Response{Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: a replay takes one message per line, not JSON-RPC batches"}})
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		code := int64(jsonrpc.CodeInvalidRequest)
		if !json.Valid(line) {
			code = jsonrpc.CodeParseError
		}
		return encode(&jsonrpc.Response{Error: &jsonrpc.Error{Code: code, Message: "not a JSON-RPC message: " + workspace.Clip(err.Error(), 200)}})
	}
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return nil
	}
	switch req.Method {
	case "ping":
		return encode(&jsonrpc.Response{ID: req.ID, Result: json.RawMessage("{}")})
	case "initialize", "server/discover":
		// Every handshake gets the recorded answer, however often it comes.
		hello := p.hello[req.Method]
		if hello == nil {
			return encode(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: CodeDrift, Message: "tape drift: the tape holds no answered " + req.Method}})
		}
		return encode(&jsonrpc.Response{ID: req.ID, Result: hello.Result, Error: hello.Error})
	}
	p.mu.Lock()
	x, drift := p.matcher.Take(req.Method, req.Params, p.opts.Lenient)
	p.mu.Unlock()
	if x == nil {
		if p.opts.Logger != nil {
			p.opts.Logger.Warn("tape drift", workspace.LogMethod, req.Method, workspace.LogTool, toolName(req.Method, req.Params), workspace.LogDrift, drift)
		}
		if req.Method == "tools/call" {
			return encode(&jsonrpc.Response{ID: req.ID, Result: driftResult(drift)})
		}
		return encode(&jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: CodeDrift, Message: drift}})
	}
	rec := p.answers[x]
	return encode(&jsonrpc.Response{ID: req.ID, Result: rec.Result, Error: rec.Error})
}

// driftResult is the tool error a tools/call that matches nothing gets:
// tychora's error envelope with NOT_FOUND.
func driftResult(drift string) json.RawMessage {
	body, _ := marshalCompact(interfaces.ErrorBody{Error: interfaces.ErrorDetail{Code: workspace.CodeNotFound, Message: drift}})
	res := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}}
	b, _ := json.Marshal(res)
	return b
}

func encode(r *jsonrpc.Response) []byte {
	b, err := jsonrpc.EncodeMessage(r)
	if err != nil { // a recorded result that is no JSON: the tape was edited
		b, _ = jsonrpc.EncodeMessage(&jsonrpc.Response{ID: r.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the recorded answer does not encode: " + err.Error()}})
	}
	return b
}
