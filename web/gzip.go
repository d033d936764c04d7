package web

import (
	"net/http"

	"github.com/klauspost/compress/gzhttp"
)

// gzipped are the answers worth compressing: the page's text, the API's JSON, the
// pictures and game records (an SVG shrinks to about a fifth). The event stream is
// not among them: each event is small and must go out at once, and a compressor
// per viewer would cost memory for a thousand of them.
var gzipped = []string{
	"text/html", "text/css", "text/javascript", "application/javascript",
	"application/json", "image/svg+xml", "application/x-go-sgf", "text/plain",
}

// gzipText compresses the text answers of h for clients that accept gzip. It is
// klauspost's gzhttp, already a dependency through the NATS server: it buffers an
// answer until it knows its type and size (small ones go as they are), passes
// Flush and http.ResponseController through for the event stream, and has no
// zstd here, whose encoders hold megabytes each.
func gzipText(h http.Handler) http.Handler {
	wrap, err := gzhttp.NewWrapper(gzhttp.ContentTypes(gzipped), gzhttp.EnableZstd(false))
	if err != nil {
		panic("page: gzip: " + err.Error()) // the options above are constants
	}
	return wrap(h)
}
