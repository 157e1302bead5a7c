// Command {{name}}-adapter is the `{{name}}` turnspec adapter: canonical messages <->
// the {{api_title}} (`{{wire_api}}`), answering turnspec's exec protocol. It
// reads one request per line on standard input and writes one answer per line on standard
// output, in order; diagnostics go to standard error only.
//
//	go build -o bin/ . && turnspec conform exec:turnspec-exec.toml
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(serve(os.Stdin, os.Stdout, os.Stderr))
}

// serve answers requests until `shutdown` or the end of input: 0, or 2 on a line that is
// no request (said on standard error).
func serve(in io.Reader, out, diag io.Writer) int {
	reader := bufio.NewReaderSize(in, 1<<20)
	writer := bufio.NewWriter(out)
	server := NewServer()
	for n := 1; ; n++ {
		line, readErr := reader.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var req Request
			if err := decodeJSON(line, &req); err != nil {
				fmt.Fprintf(diag, "request line %d is not a JSON request: %v\n", n, err)
				return 2
			}
			answer, err := encodeJSON(server.Answer(req))
			if err != nil { // a value JSON cannot carry: a crash, still one answer
				answer, _ = encodeJSON(Object{"id": req.ID, "ok": false, "logs": []any{},
					"error": Object{"kind": "crash", "message": err.Error(), "type": "error"}})
			}
			writer.Write(append(answer, '\n'))
			if err := writer.Flush(); err != nil {
				fmt.Fprintf(diag, "cannot write an answer: %v\n", err)
				return 1
			}
			if req.Op == "shutdown" {
				return 0
			}
		}
		if readErr == io.EOF {
			return 0
		}
		if readErr != nil {
			fmt.Fprintf(diag, "cannot read a request: %v\n", readErr)
			return 1
		}
	}
}
