package lambdarun

import (
	"bufio"
	"fmt"
	"io"
	"sync"
	"time"
)

// lineSink serializes whole lines from every instance of a function (and the service's own
// lines) onto one writer, as Lambda collects them into log streams: concurrent instances
// never interleave within a line.
type lineSink struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *lineSink) write(line []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, _ = s.w.Write(line)
	if len(line) == 0 || line[len(line)-1] != '\n' {
		_, _ = s.w.Write([]byte{'\n'})
	}
}

// platformf writes a line the Lambda service itself would log (timeouts, runtime exits).
func (s *lineSink) platformf(format string, args ...any) {
	s.write([]byte(time.Now().UTC().Format("2006-01-02T15:04:05.000Z ") + fmt.Sprintf(format, args...)))
}

// copyLines forwards r line by line until EOF; a last line without a newline is kept.
func (s *lineSink) copyLines(r io.Reader) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			s.write(line)
		}
		if err != nil {
			return
		}
	}
}
